from typing import Literal

ServerImportRequestTypeType1 = Literal["", "mcp/server/import/req"]

SERVER_IMPORT_REQUEST_TYPE_TYPE_1_VALUES: set[ServerImportRequestTypeType1] = {
    "",
    "mcp/server/import/req",
}


def check_server_import_request_type_type_1(value: str) -> ServerImportRequestTypeType1:
    if value in SERVER_IMPORT_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_IMPORT_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
