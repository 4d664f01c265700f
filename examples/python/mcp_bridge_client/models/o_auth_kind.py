from typing import Literal

OAuthKind = Literal["oauth2"]

O_AUTH_KIND_VALUES: set[OAuthKind] = {
    "oauth2",
}


def check_o_auth_kind(value: str) -> OAuthKind:
    if value in O_AUTH_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {O_AUTH_KIND_VALUES!r}"
    )
