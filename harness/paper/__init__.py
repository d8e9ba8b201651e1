"""The paper's reproduction: its figures typed once (`figures`), where each of ours comes
from (`sources`), the comparisons and verdicts (`findings`) and docs/REPRODUCTION.md
(`document`). Nothing outside this package and the CLI imports it."""
