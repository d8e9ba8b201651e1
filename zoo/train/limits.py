"""Upper bounds of run settings: far above any real run, low enough that a typo fails when the
config is validated and not as an allocation abort (a 10^11 vocabulary) or an endless loop;
and the number types of the sections: `Int` and `Float` refuse a yes/no (`steps: yes` is
YAML's True, which pydantic would read as 1)."""

from typing import Annotated

from pydantic import BeforeValidator

from zoo.settings import not_a_bool

Int = Annotated[int, BeforeValidator(not_a_bool)]
Float = Annotated[float, BeforeValidator(not_a_bool)]

MAX_VOCAB = 2**21
MAX_STEPS = 10**9
MAX_SEQUENCES = 2**20
MAX_POSITIONS = 2**20
