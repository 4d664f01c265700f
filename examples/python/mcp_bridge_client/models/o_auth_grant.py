from typing import Literal

OAuthGrant = Literal[
    "authorization_code", "client_credentials", "id_jag", "token_exchange"
]

O_AUTH_GRANT_VALUES: set[OAuthGrant] = {
    "authorization_code",
    "client_credentials",
    "id_jag",
    "token_exchange",
}


def check_o_auth_grant(value: str) -> OAuthGrant:
    if value in O_AUTH_GRANT_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {O_AUTH_GRANT_VALUES!r}"
    )
