"""Task files in KernelBench's format, written for these tests (none is copied from
KernelBench): each has GPU-sized shapes in one of the forms the shrink rule must handle."""
