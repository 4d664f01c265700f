from typing import Literal

TokenEndpointAuth = Literal[
    "client_secret_basic", "client_secret_post", "none", "private_key_jwt"
]

TOKEN_ENDPOINT_AUTH_VALUES: set[TokenEndpointAuth] = {
    "client_secret_basic",
    "client_secret_post",
    "none",
    "private_key_jwt",
}


def check_token_endpoint_auth(value: str) -> TokenEndpointAuth:
    if value in TOKEN_ENDPOINT_AUTH_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOKEN_ENDPOINT_AUTH_VALUES!r}"
    )
