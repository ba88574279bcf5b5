# test/build: checks of the build files themselves (test-build, suites "build"
# and "float_guard": core/tr_config.h against a consumer's -ffast-math and
# -ffp-contract=fast).
.PHONY: test-build
test-build: $(BUILD)/libtinyring.a
	@mkdir -p $(TR_RESULTS)
	@st=0; timeout 60 bash test/build/check_make.sh || st=1; \
	  CC='$(CC)' HOST_ARCH='$(HOST_ARCH)' timeout 600 bash test/build/float_guard.sh $(BUILD) || st=1; exit $$st

TEST_TARGETS += test-build
