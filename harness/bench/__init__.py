"""What the `throughput` task measures with: training steps stepped side by side (`stepper`),
timed against a matmul roofline (`timing`), and memory measured in a fresh process (`probe`,
`memory`). The repository's own benchmarks (`hlm bench`) live in `benchmarks/` and use these.
"""
