from typing import Literal

ImportAction = Literal["created", "failed", "replaced", "skipped", "unchanged"]

IMPORT_ACTION_VALUES: set[ImportAction] = {
    "created",
    "failed",
    "replaced",
    "skipped",
    "unchanged",
}


def check_import_action(value: str) -> ImportAction:
    if value in IMPORT_ACTION_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {IMPORT_ACTION_VALUES!r}"
    )
