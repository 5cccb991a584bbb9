"""The overlapscope GPU validation kit (tests/gpu/run.sh, tests/gpu/README.md)."""
