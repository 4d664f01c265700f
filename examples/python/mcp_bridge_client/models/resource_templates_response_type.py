from typing import Literal

ResourceTemplatesResponseType = Literal["mcp/resource/templates/resp"]

RESOURCE_TEMPLATES_RESPONSE_TYPE_VALUES: set[ResourceTemplatesResponseType] = {
    "mcp/resource/templates/resp",
}


def check_resource_templates_response_type(value: str) -> ResourceTemplatesResponseType:
    if value in RESOURCE_TEMPLATES_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_TEMPLATES_RESPONSE_TYPE_VALUES!r}"
    )
