from typing import Literal

McpResourceContentType = Literal["text"]

MCP_RESOURCE_CONTENT_TYPE_VALUES: set[McpResourceContentType] = {
    "text",
}


def check_mcp_resource_content_type(value: str) -> McpResourceContentType:
    if value in MCP_RESOURCE_CONTENT_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {MCP_RESOURCE_CONTENT_TYPE_VALUES!r}"
    )
