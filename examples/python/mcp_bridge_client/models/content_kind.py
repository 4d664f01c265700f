from typing import Literal

ContentKind = Literal["blob", "text"]

CONTENT_KIND_VALUES: set[ContentKind] = {
    "blob",
    "text",
}


def check_content_kind(value: str) -> ContentKind:
    if value in CONTENT_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CONTENT_KIND_VALUES!r}"
    )
