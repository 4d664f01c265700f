from typing import Literal

ServerImportRequestTypeType2Type1 = Literal["", "mcp/server/import/req"]

SERVER_IMPORT_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[
    ServerImportRequestTypeType2Type1
] = {
    "",
    "mcp/server/import/req",
}


def check_server_import_request_type_type_2_type_1(
    value: str,
) -> ServerImportRequestTypeType2Type1:
    if value in SERVER_IMPORT_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_IMPORT_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
