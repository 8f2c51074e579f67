"""Device-wide ops (CUB's ``Device*``): one module per op family, each that has torch operators
ending with their registrations (``partition``, ``reduce_by_key`` and ``run_length_encode`` have
none: they are device functions only). ``import tritoncub`` imports them all."""
