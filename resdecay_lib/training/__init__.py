"""Layer 4, training: ``config`` (TrainConfig, RunPlan; no torch), ``store`` (the one atomic
write, the sweep loader, claims, provenance; no torch), ``data``, ``baselines``, ``train`` (the
loop), ``runs`` (one run measured through training), ``sweep``, ``engines``."""
