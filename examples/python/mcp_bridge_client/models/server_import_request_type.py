from typing import Literal

ServerImportRequestType = Literal["", "mcp/server/import/req"]

SERVER_IMPORT_REQUEST_TYPE_VALUES: set[ServerImportRequestType] = {
    "",
    "mcp/server/import/req",
}


def check_server_import_request_type(value: str) -> ServerImportRequestType:
    if value in SERVER_IMPORT_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_IMPORT_REQUEST_TYPE_VALUES!r}"
    )
