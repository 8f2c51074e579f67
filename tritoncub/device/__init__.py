"""Device-wide ops (CUB's ``Device*``): one module per op family, each ending with its torch
operator registrations. ``import tritoncub`` imports them all."""
