from typing import Literal

DefinedIn = Literal["api", "config"]

DEFINED_IN_VALUES: set[DefinedIn] = {
    "api",
    "config",
}


def check_defined_in(value: str) -> DefinedIn:
    if value in DEFINED_IN_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {DEFINED_IN_VALUES!r}"
    )
