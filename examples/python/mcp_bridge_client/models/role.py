from typing import Literal

Role = Literal["assistant", "user"]

ROLE_VALUES: set[Role] = {
    "assistant",
    "user",
}


def check_role(value: str) -> Role:
    if value in ROLE_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {ROLE_VALUES!r}")
