# apps/board_mps2: Cortex-M4F firmware images for QEMU's mps2-an386.
#
#   make test-board    build the images, run them under qemu-system-arm, compare
#                      the board's training losses with the host's (and the ring)
#   make cross-board   text/data/bss of core alone, core + lwIP port, whole image
#
# core/ is compiled again for the board with the project's strict flags and the
# board's architecture flags; nothing here changes the host build.
#
# The folder's rooms, one per group of objects below:
#   bsp/     startup, semihosting, clock, console, formatter, command line, the
#            LAN9118 driver: what any image on this board needs
#   net/     the ring's links: lwIP on the LAN9118 (net_lwip.c, lan9118_netif.c)
#            or none (net_none.c)
#   images/  the images' mains and what only the training images use
#   ld/      linker scripts (QEMU's 4 MiB; the RAM capped at 512 KiB)
#   tools/   host side: the build-time size query (gen_cfg.c) and the
#            scripts behind board-cycles, board-profile and cross-board

BOARD_DIR   := apps/board_mps2
BOARD_OUT   ?= $(BUILD)/board
BOARD_CC    ?= arm-none-eabi-gcc
BOARD_AR    ?= arm-none-eabi-ar
BOARD_SIZE  ?= arm-none-eabi-size
BOARD_NM    ?= arm-none-eabi-nm
BOARD_QEMU  ?= qemu-system-arm
# the target: the Cortex-M4F of mps2-an386, or (board-m55-image) the
# Cortex-M55 of mps3-an547 (BOARD_TARGET_DEFS=-DBOARD_MPS3_AN547: its
# clock, LAN9118 address and interrupt; test/core/cross.mk's m55 flags)
BOARD_ARCH ?= $(M4F_ARCH)
BOARD_TARGET_DEFS ?=
# core for the board: core's microcontroller flags (core/core.mk) for the
# target
BOARD_CORE_CFLAGS := $(CORE_MCU_CFLAGS) $(BOARD_ARCH)
# board support and images: gnu99, same float rules as core
BOARD_CFLAGS := -std=gnu99 -Wall -Wextra -Werror -O2 -g -ffp-contract=off \
                -ffreestanding $(BOARD_ARCH) $(BOARD_TARGET_DEFS) -ffunction-sections -fdata-sections \
                -Icore/include -Icore -I$(BOARD_DIR)/bsp -I$(BOARD_DIR)/net -I$(BOARD_DIR)/images -I$(BOARD_OUT)
# the linker script: QEMU's 4 MiB of SSRAM2/3 (and 16 MiB PSRAM), or the
# capped RAM of mps2_cap.ld (BOARD_RAM and BOARD_STACK, in ld's units:
# 384K, 4096) for the board-ring-512k/384k/256k images
BOARD_LD    ?= $(BOARD_DIR)/ld/mps2.ld
BOARD_RAM   ?=
BOARD_STACK ?= 0x8000
BOARD_CAP_LDFLAGS = -Wl,--defsym=BOARD_RAM_BYTES=$(BOARD_RAM) \
                    -Wl,--defsym=BOARD_STACK_BYTES=$(BOARD_STACK)
BOARD_LDFLAGS := $(BOARD_ARCH) -nostartfiles --specs=nano.specs -T $(BOARD_LD) \
                 -Wl,--gc-sections -Wl,--no-warn-rwx-segments $(if $(BOARD_RAM),$(BOARD_CAP_LDFLAGS))
BOARD_LIBS  := -lc -lgcc

# the training images: core's trainer on the seed ConvNet (16/32), with a
# static arena sized by core's size query for the largest batch per rank,
# the gradient mode (full, or bucket: no full gradient, docs/BUCKETS.md)
# and the momentum (0: no momentum twin) they accept; any training set (the
# sampler stores nothing per sample). The settings come from the command line.
BOARD_C1 ?= 16
BOARD_C2 ?= 32
BOARD_BATCH_MAX ?= 4
BOARD_MOMENTUM ?= 0.9
BOARD_GRADS ?= full
# batch: the lean plan keeps conv1's planes of the batch; one: one plane,
# made again by every pass (TR_MODEL_ONE_PLANE: less arena at batch > 1)
BOARD_PLANES ?= batch
BOARD_SEGMENT ?= 4096
# the execution plan the images train on: 0 fast, 1 lean (docs/DESIGN.md)
BOARD_PLAN ?= 0
# all: the arena holds a lossy --compress codec's error-feedback residual and
# wire image (and the anchor of --average-every with one); none: the image
# refuses a lossy --compress (the capped images: no room)
BOARD_CODECS ?= all

BOARD_BSP_SRCS := startup.c semihost.c clock.c console.c fmt.c args.c
BOARD_BSP_OBJS := $(BOARD_BSP_SRCS:%.c=$(BOARD_OUT)/bsp/%.o)
BOARD_CORE_OBJS := $(CORE_SRCS:core/%.c=$(BOARD_OUT)/core/%.o)
BOARD_CORE_LIB := $(BOARD_OUT)/libtinyring_m4.a
# the core library the images link: this one, or one built elsewhere with
# the same flags (board-m55-image: test-cross's)
BOARD_LINK_CORE ?= $(BOARD_CORE_LIB)

$(BOARD_OUT)/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_CORE_CFLAGS) -c $< -o $@

$(BOARD_CORE_LIB): $(BOARD_CORE_OBJS)
	@rm -f $@
	$(BOARD_AR) rcs $@ $^

# every board object is rebuilt when any header it could see changes: its
# own, core's contract and the lwIP port's (struct layouts cross these lines)
BOARD_HDRS := $(wildcard $(BOARD_DIR)/*/*.h) $(CORE_HDRS)

$(BOARD_OUT)/bsp/%.o: $(BOARD_DIR)/bsp/%.c $(BOARD_HDRS)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_CFLAGS) -c $< -o $@

$(BOARD_OUT)/images/%.o: $(BOARD_DIR)/images/%.c $(BOARD_HDRS)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_CFLAGS) -c $< -o $@

# the image without a network needs no lwIP headers
$(BOARD_OUT)/net/net_none.o: $(BOARD_DIR)/net/net_none.c $(BOARD_HDRS)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_CFLAGS) -c $< -o $@

# links: no heap exists, so anything that needs one fails on _sbrk there
$(BOARD_OUT)/hello.elf: $(BOARD_OUT)/images/hello_main.o $(BOARD_BSP_OBJS) $(BOARD_LD)
	$(BOARD_CC) $(BOARD_LDFLAGS) -Wl,-Map,$(basename $@).map -o $@ $(filter %.o,$^) $(BOARD_LIBS)

$(BOARD_OUT)/nettest.elf: $(BOARD_OUT)/images/nettest_main.o $(BOARD_OUT)/bsp/lan9118.o \
                          $(BOARD_BSP_OBJS) $(BOARD_LD)
	$(BOARD_CC) $(BOARD_LDFLAGS) -Wl,-Map,$(basename $@).map -o $@ $(filter %.o,$^) $(BOARD_LIBS)

# build-time size query: a host tool linked with the host core library
$(BOARD_OUT)/gen_cfg: $(BOARD_DIR)/tools/gen_cfg.c $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -o $@ $< $(BUILD)/libtinyring.a

# regenerated on every make (the variables may come from the command line),
# replaced only when it changes, so nothing rebuilds needlessly
$(BOARD_OUT)/board_cfg.h: $(BOARD_OUT)/gen_cfg board-cfg-force
	@$(BOARD_OUT)/gen_cfg header $(BOARD_C1) $(BOARD_C2) $(BOARD_BATCH_MAX) $(BOARD_SEGMENT) \
	  $(BOARD_PLAN) $(BOARD_MOMENTUM) $(BOARD_GRADS) $(BOARD_PLANES) $(BOARD_CODECS) \
	  $(if $(findstring BOARD_ELASTIC=0,$(BOARD_LWIP_DEFS)),fixed,elastic) > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; echo "board: $@ updated"; fi

.PHONY: board-cfg-force
board-cfg-force:

# train.elf: one board alone (no network); ring.elf: the same loop as one rank
# of a ring (net_lwip.c: lwIP on the LAN9118). Both from train_main.c.
BOARD_TRAIN_OBJS := $(BOARD_OUT)/images/train_main.o $(BOARD_OUT)/images/settings.o \
                    $(BOARD_OUT)/images/idx_sh.o
$(BOARD_OUT)/images/train_main.o: $(BOARD_OUT)/board_cfg.h

$(BOARD_OUT)/train.elf: $(BOARD_TRAIN_OBJS) $(BOARD_OUT)/net/net_none.o $(BOARD_BSP_OBJS) \
                        $(BOARD_LINK_CORE) $(BOARD_LD)
	$(BOARD_CC) $(BOARD_LDFLAGS) -Wl,-Map,$(basename $@).map -o $@ $(filter %.o,$^) \
	  $(BOARD_LINK_CORE) $(BOARD_LIBS)

# lwIP and the tr_lwip port for the board, from port/lwip/lwip.mk's lists
# (lwIP built as its authors intend, warnings theirs; the port held to -Werror)
BOARD_LWIP_OBJS := $(LWIP_CORE_SRCS:$(LWIP_DIR)/src/%.c=$(BOARD_OUT)/lwip/%.o)
BOARD_TR_LWIP_OBJS := $(TR_LWIP_SRCS:$(LWIP_PORT_DIR)/%.c=$(BOARD_OUT)/lwip_port/%.o)
BOARD_LWIP_LIB := $(BOARD_OUT)/liblwip_m4.a
BOARD_TR_LWIP_LIB := $(BOARD_OUT)/libtr_lwip_m4.a
# The receive window must fit the LAN9118's RX data FIFO (QEMU models 2640
# words, 10.5 KiB; silicon with a 5 KiB TX FIFO has about as much): a window
# of 8 MSS let the host burst more frames than the FIFO holds, the model
# dropped them and TCP stalled on retransmission timeouts. 4 MSS fits.
BOARD_LWIP_DEFS ?= -DTCP_WND='(4*TCP_MSS)'
BOARD_LWIP_CFLAGS := -std=gnu99 -O2 -g -w $(BOARD_ARCH) -ffunction-sections -fdata-sections \
                     -ffreestanding $(LWIP_INCLUDES) $(BOARD_LWIP_DEFS)

$(BOARD_OUT)/lwip/%.o: $(LWIP_DIR)/src/%.c $(TR_LWIP_HDRS) $(BOARD_DIR)/board.mk | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_LWIP_CFLAGS) -c $< -o $@

$(BOARD_OUT)/lwip_port/%.o: $(LWIP_PORT_DIR)/%.c $(TR_LWIP_HDRS) $(CORE_HDRS) $(BOARD_DIR)/board.mk \
                             | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(TR_LWIP_CFLAGS) $(BOARD_LWIP_DEFS) $(BOARD_ARCH) -ffunction-sections \
	  -fdata-sections -c $< -o $@

$(BOARD_LWIP_LIB): $(BOARD_LWIP_OBJS)
	@rm -f $@
	$(BOARD_AR) rcs $@ $^
$(BOARD_TR_LWIP_LIB): $(BOARD_TR_LWIP_OBJS)
	@rm -f $@
	$(BOARD_AR) rcs $@ $^

$(BOARD_OUT)/net/%.o: $(BOARD_DIR)/net/%.c $(BOARD_HDRS) $(TR_LWIP_HDRS) $(BOARD_OUT)/board_cfg.h \
                      | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_CFLAGS) $(LWIP_INCLUDES) $(BOARD_LWIP_DEFS) -c $< -o $@

$(BOARD_OUT)/ring.elf: $(BOARD_TRAIN_OBJS) $(BOARD_OUT)/net/net_lwip.o \
                       $(BOARD_OUT)/net/lan9118_netif.o $(BOARD_OUT)/bsp/lan9118.o \
                       $(BOARD_BSP_OBJS) $(BOARD_TR_LWIP_LIB) $(BOARD_LWIP_LIB) $(BOARD_LINK_CORE) \
                       $(BOARD_LD)
	$(BOARD_CC) $(BOARD_LDFLAGS) -Wl,-Map,$(basename $@).map -o $@ $(filter %.o,$^) \
	  $(BOARD_TR_LWIP_LIB) $(BOARD_LWIP_LIB) $(BOARD_LINK_CORE) $(BOARD_LIBS)

BOARD_IMAGES := $(BOARD_OUT)/hello.elf $(BOARD_OUT)/nettest.elf $(BOARD_OUT)/train.elf \
                $(BOARD_OUT)/ring.elf
# the boards' host twin and ring partner is mnist_ring itself; gen_idx writes
# the IDX files they all read
BOARD_HOST_TOOLS := $(BOARD_OUT)/gen_cfg $(BUILD)/mnist_ring $(BUILD)/test/app/gen_idx

# instruction count per training sample under qemu -icount on the three
# cross targets (not a test: builds test/core/cross images of a few variants)
board-cycles: $(ARENA_SIZES) $(BUILD)/libtinyring.a
	@BUILD=$(BUILD) MAKE="$(MAKE)" bash $(BOARD_DIR)/tools/cycles.sh

# instructions of core's gradient codecs (encode with error feedback, and
# decode-add) over the seed ConvNet's gradient on the three cross targets
# (tools/codec_cycles.c on test/core/cross's start files; not a test)
define BOARD_CODEC_CYCLES_RULE
$(BUILD)/board-codec/$(1)/codec_cycles.elf: $(BOARD_DIR)/tools/codec_cycles.c $$($(1)_PORT) \
    test/core/cross/mini_libc.c $$($(1)_LD) $(CROSS_DIR)/$(1)/libtinyring.a
	@mkdir -p $$(dir $$@)
	$$($(1)_CC) $$(CROSS_IMG_CFLAGS) $$($(1)_ARCH) -Icore/include -Icore -Itest/core/cross -nostdlib -nostartfiles \
	  -T $$($(1)_LD) -Wl,--gc-sections $$($(1)_LDFLAGS) -o $$@ $$($(1)_PORT) $$< \
	  test/core/cross/mini_libc.c $(CROSS_DIR)/$(1)/libtinyring.a -lgcc
endef
$(foreach t,m4 rv32 m55,$(eval $(call BOARD_CODEC_CYCLES_RULE,$(t))))
board-codec-cycles: $(foreach t,m4 rv32 m55,$(BUILD)/board-codec/$(t)/codec_cycles.elf)
	@bash -c '. test/core/cross/qemu.sh; for t in m4 rv32 m55; do \
	  cross_qemu $$t $(BUILD)/board-codec/$$t/codec_cycles.elf 300 | grep "^codec\|FAIL" | sed "s/^/$$t: /"; done'

# instructions per function of one of those images, the whole run, under
# QEMU's block logs: make board-profile [PROFILE_TARGET=m4|m55|rv32]
# [PROFILE_IMAGE=16-32-1-2-0-1 (nets C1-C2, batch, steps, 0, plan 0 fast / 1 lean)]
PROFILE_TARGET ?= m4
PROFILE_IMAGE ?= 16-32-1-2-0-1
board-profile: $(ARENA_SIZES) $(BUILD)/libtinyring.a
	@BUILD=$(BUILD) MAKE="$(MAKE)" bash $(BOARD_DIR)/tools/profile.sh $(PROFILE_TARGET) $(PROFILE_IMAGE)

# the ring again with a small board's lwIP (MSS 536, 2-segment window and
# send buffer), built into $(BUILD)/board-small: RAM it needs and that it works
BOARD_SMALL_LWIP := -DTCP_MSS=536 '-DTCP_WND=(2*TCP_MSS)' '-DTCP_SND_BUF=(2*TCP_MSS)'
board-ring-small:
	@$(MAKE) --no-print-directory -s BOARD_OUT=$(BUILD)/board-small \
	  "BOARD_LWIP_DEFS=$(BOARD_SMALL_LWIP)" $(BUILD)/board-small/ring.elf \
	  $(BUILD)/board-small/gen_cfg $(BUILD)/mnist_ring $(BUILD)/test/app/gen_idx
	@BUILD=$(BUILD) BOARD_OUT=$(BUILD)/board-small BOARD_QEMU=$(BOARD_QEMU) bash test/board/mixed.sh
	@BUILD=$(BUILD) BOARD_OUT=$(BUILD)/board-small BOARD_SIZE=$(BOARD_SIZE) bash $(BOARD_DIR)/tools/sizes.sh \
	  | sed -n '/ring.elf RAM/,/total/p'

# The capped boards: the ring image with the RAM region capped (mps2_cap.ld:
# .data, .bss, the stack and the arena must fit in BOARD_RAM, or the link
# fails), the seed ConvNet on the lean plan, any training set, each built
# into $(BUILD)/board-<cap>k. board-ring-<cap>k trains two of them in the
# mixed ring with two mnist_ring ranks (mixed.sh: every step's hashes equal
# four mnist_ring ranks alone, each board's stack within its reserve; the
# killed-board part runs for the standard images only), then prints the RAM.
#   512k  the small board's lwIP, batch <= 2, full gradient, momentum 0.9
#         (suite board_mixed_512k; not in test-board: 384k is the tighter)
#   384k  batch 1, in-place gradient (docs/BUCKETS.md 5), momentum 0.9, a
#         4 KiB stack, the lean lwIP below (suite board_384k)
#   256k  the same at momentum 0 (no momentum twin) and without --elastic
#         (BOARD_ELASTIC=0), 10 steps on a 60,000-sample set: the sampler's
#         full-size shuffle read a sample at a time through semihosting
#         (suite board_256k)
# No capped image has room for a lossy codec (its residual alone is 4 bytes
# a parameter, 116 KiB for the seed ConvNet): they refuse --compress
# bf16|int8|int4 at start-up; BOARD_CAP_CODECS=all shows the link's overflow.
# The lean lwIP: the small board's MSS and windows, a heap of the two send
# buffers + 2 KiB, 8 pool frames, 4 PCBs, receive rings of one window.
BOARD_CAP_LWIP := $(BOARD_SMALL_LWIP) '-DMEM_SIZE=(2*TCP_SND_BUF+2048)' -DPBUF_POOL_SIZE=8 \
                  -DMEMP_NUM_TCP_PCB=4 -DBOARD_RX_WNDS=1
BOARD_CAP_512K := "BOARD_LWIP_DEFS=$(BOARD_SMALL_LWIP)" BOARD_RAM=512K BOARD_STACK=0x8000 \
                  BOARD_BATCH_MAX=2
BOARD_CAP_384K := "BOARD_LWIP_DEFS=$(BOARD_CAP_LWIP)" BOARD_RAM=384K BOARD_STACK=4096 \
                  BOARD_BATCH_MAX=1 BOARD_GRADS=bucket
BOARD_CAP_256K := "BOARD_LWIP_DEFS=$(BOARD_CAP_LWIP) -DBOARD_ELASTIC=0" BOARD_RAM=256K \
                  BOARD_STACK=4096 BOARD_BATCH_MAX=1 BOARD_GRADS=bucket BOARD_MOMENTUM=0
BOARD_CAP_CODECS ?= none
BOARD_RUN_512K := BOARD_MIXED_SUITE=board_mixed_512k BOARD_MIXED_NOCODEC=1
BOARD_RUN_384K := BOARD_MIXED_SUITE=board_384k BOARD_MIXED_BATCH=1 BOARD_MIXED_STACK=4096 \
                  BOARD_MIXED_NOCODEC=1 BOARD_MIXED_ELASTIC=1
BOARD_RUN_256K := BOARD_MIXED_SUITE=board_256k BOARD_MIXED_BATCH=1 BOARD_MIXED_STACK=4096 \
                  BOARD_MIXED_NOCODEC=1 \
                  BOARD_MIXED_MOMENTUM=0 BOARD_MIXED_TRAIN=60000 BOARD_MIXED_STEPS=10
board-%k-image: $(BUILD)/mnist_ring $(BUILD)/test/app/gen_idx
	@$(MAKE) --no-print-directory -s BOARD_OUT=$(BUILD)/board-$*k BOARD_PLAN=1 \
	  BOARD_LD=$(BOARD_DIR)/ld/mps2_cap.ld BOARD_CODECS=$(BOARD_CAP_CODECS) $(BOARD_CAP_$*K) \
	  $(BUILD)/board-$*k/ring.elf
board-ring-%k: board-%k-image
	@BUILD=$(BUILD) BOARD_OUT=$(BUILD)/board-$*k BOARD_QEMU=$(BOARD_QEMU) BOARD_MIXED_KILL=0 \
	  $(BOARD_RUN_$*K) bash test/board/mixed.sh
	@$(BOARD_SIZE) -A $(BUILD)/board-$*k/ring.elf | awk -v cap=$$(($**1024)) \
	  '$$1 ~ /^\.(data|bss|stack|psram)$$/ { print "  " $$1, $$2; t += $$2 } \
	  END { printf "  RAM used %d of %d bytes (%d KiB), %d left\n", t, cap, cap / 1024, cap - t }'

# ring.elf for the Cortex-M55 of QEMU's mps3-an547 (the same sources; code
# in the ITCM, data in the DTCM, the arena in the 4 MiB SRAM:
# ld/mps3_an547.ld), in $(BUILD)/board-m55: a board of another target in
# the compressed mixed rings (test/board/compress.sh). Core is test-cross's
# M55 library (test/core/cross.mk, the same flags), built here first with
# the host library gen_cfg links, so no two makes build one file. The gnu99
# sources ask for FLT_EVAL_METHOD 0 (GNU C says 16: the M55 has half floats).
board-m55-image: $(CROSS_DIR)/m55/libtinyring.a $(BUILD)/libtinyring.a
	@$(MAKE) --no-print-directory -s BOARD_OUT=$(BUILD)/board-m55 \
	  "BOARD_ARCH=$(m55_ARCH) -fpermitted-flt-eval-methods=c11" \
	  BOARD_TARGET_DEFS=-DBOARD_MPS3_AN547 BOARD_LD=$(BOARD_DIR)/ld/mps3_an547.ld \
	  BOARD_LINK_CORE=$(CROSS_DIR)/m55/libtinyring.a $(BUILD)/board-m55/ring.elf

.PHONY: test-board cross-board board-m55-image board-codec-cycles board-images board-cycles board-profile board-ring-small
board-images: $(BOARD_IMAGES)

test-board: $(BOARD_IMAGES) $(BOARD_HOST_TOOLS) board-384k-image board-256k-image board-m55-image
	@st=0; BUILD=$(BUILD) BOARD_OUT=$(BOARD_OUT) BOARD_QEMU=$(BOARD_QEMU) \
	  bash test/board/test_board.sh || st=1; \
	BUILD=$(BUILD) MAKE="$(MAKE)" bash test/board/test_profile.sh || st=1; \
	$(MAKE) --no-print-directory -s board-ring-384k || st=1; \
	$(MAKE) --no-print-directory -s board-ring-256k || st=1; exit $$st

# the whole trainer arena (tr_train_arena_size) of each board configuration
# at MNIST's 60,000 samples: c1 c2 batch plan momentum grads planes [codecs:
# all adds a line per lossy codec, what its residual and wire image cost]
BOARD_TRAINER_CONFIGS := 16:32:4:0:0.9:full:batch 16:32:2:1:0.9:full:batch \
                         16:32:1:1:0.9:full:batch 16:32:1:1:0.9:bucket:batch \
                         16:32:1:1:0:bucket:batch 4:8:4:1:0.9:bucket:batch \
                         4:8:4:1:0:bucket:batch 4:8:4:1:0.9:bucket:one 4:8:4:1:0:bucket:one \
                         16:32:4:0:0.9:full:batch:all 16:32:2:1:0.9:full:batch:all \
                         16:32:1:1:0.9:bucket:batch:all
cross-board: $(BOARD_IMAGES) $(BOARD_OUT)/gen_cfg
	@BUILD=$(BUILD) BOARD_OUT=$(BOARD_OUT) BOARD_SIZE=$(BOARD_SIZE) bash $(BOARD_DIR)/tools/sizes.sh
	@echo "== the trainer's arena of the board configurations (gen_cfg trainer)"
	@$(foreach c,$(BOARD_TRAINER_CONFIGS),$(BOARD_OUT)/gen_cfg trainer \
	  $(word 1,$(subst :, ,$(c))) $(word 2,$(subst :, ,$(c))) $(word 3,$(subst :, ,$(c))) \
	  $(BOARD_SEGMENT) $(word 4,$(subst :, ,$(c))) $(word 5,$(subst :, ,$(c))) \
	  $(word 6,$(subst :, ,$(c))) $(word 7,$(subst :, ,$(c))) $(word 8,$(subst :, ,$(c))) &&) true

TEST_TARGETS  += test-board
CROSS_TARGETS += cross-board
