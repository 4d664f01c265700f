from typing import Literal

ServerImportResponseType = Literal["mcp/server/import/resp"]

SERVER_IMPORT_RESPONSE_TYPE_VALUES: set[ServerImportResponseType] = {
    "mcp/server/import/resp",
}


def check_server_import_response_type(value: str) -> ServerImportResponseType:
    if value in SERVER_IMPORT_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_IMPORT_RESPONSE_TYPE_VALUES!r}"
    )
