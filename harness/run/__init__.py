"""Running a suite: cells to compute, the evaluation points they need, and the loop that
computes them (`runner`), with claims so that runs share the work, each task's raw outputs
(`artifacts`), the rows a computed cell gives (`rows`) and `hlm evaluate` on one checkpoint
(`evaluate`)."""
