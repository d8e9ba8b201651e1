"""What a run leaves: the typed row schema (`schema`), the Parquet leaderboard folder
(`leaderboard`), per-example scores (`samples`), the metric registry (`metrics`) and the
statistics that compare models across seeds (`significance`)."""
