from typing import Literal

ElicitAction = Literal["accept", "cancel", "decline"]

ELICIT_ACTION_VALUES: set[ElicitAction] = {
    "accept",
    "cancel",
    "decline",
}


def check_elicit_action(value: str) -> ElicitAction:
    if value in ELICIT_ACTION_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ELICIT_ACTION_VALUES!r}"
    )
