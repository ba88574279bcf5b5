# test/build: checks of the build files themselves (test-build, suite "build").
.PHONY: test-build
test-build:
	@mkdir -p $(TR_RESULTS)
	@timeout 60 bash test/build/check_make.sh

TEST_TARGETS += test-build
