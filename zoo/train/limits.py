"""Upper bounds of run settings: far above any real run, low enough that a typo fails when the
config is validated and not as an allocation abort (a 10^11 vocabulary) or an endless loop.
(A yes/no or an infinite float where a number is meant is refused by `zoo.settings.Settings`,
the base of every section.)"""

MAX_VOCAB = 2**21
MAX_STEPS = 10**9
MAX_SEQUENCES = 2**20
MAX_POSITIONS = 2**20
