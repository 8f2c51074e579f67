"""Thread-level helpers (CUB's ``thread/`` layer): element-wise ``@triton.jit`` code that every
higher layer shares, such as the radix key traits."""
