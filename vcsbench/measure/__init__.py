"""Measurement: counters read around a region, the system sampler, machine facts and the
rig's self-check. Knows the OS (and sandboxes, to calibrate in them), nothing about VCS."""
