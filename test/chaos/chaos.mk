# test/chaos: random faults against --elastic jobs (test/chaos/chaos.sh):
# mnist_ring over POSIX, and mixed POSIX/lwIP rings of test/lwip's programs.
#   make chaos CHAOS_S=600 [CHAOS_SEED=N]   as long as you like; the seed is printed
#     [CHAOS_TIMEOUT=S]  the jobs' --timeout (3; more on a heavily loaded machine,
#                        where a ring may not form within 3 s)
#     [CHAOS_MIXED=P]    percent of mixed POSIX/lwIP jobs (33; they need root)
#     [CHAOS_KINDS=PLPL CHAOS_VICTIM=0 CHAOS_FAULT=restart]  one mixed case every time
#     [CHAOS_KEEP=dir]   copy a failed mixed job's rank logs there
#     [CHAOS_STALL=S]    no new step or view on any rank for S s: a hang (8 x timeout + 20)
#     [CHAOS_BOUND=S]    the backstop: no process of a job may take longer (600)
#   make test-chaos                          the 60-second run of make test, and
#                                            stall.sh: the hang rule on stand-in ranks
CHAOS_S    ?= 600
CHAOS_SEED ?=
CHAOS_DEPS := $(BUILD)/mnist_ring $(BUILD)/test/app/gen_idx $(BUILD)/test/app/free_port lwip-test-bins

.PHONY: chaos test-chaos
chaos: $(CHAOS_DEPS)
	@bash test/chaos/chaos.sh $(BUILD) $(CHAOS_S) $(CHAOS_SEED)

TEST_TARGETS += test-chaos
test-chaos: $(CHAOS_DEPS)
	@mkdir -p $(TR_RESULTS)
	timeout 300 bash test/chaos/chaos.sh $(BUILD) 60 $(CHAOS_SEED)
	timeout 150 bash test/chaos/stall.sh $(BUILD)
