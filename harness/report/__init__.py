"""What a person reads from a leaderboard: tables (`tables`), figures (`plots`) and the
one-file HTML page (`page`). Generic over suites; the paper's reproduction report lives in
`harness.paper` and is added to a page by the caller."""
