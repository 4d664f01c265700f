from typing import Literal

PromptListResponseType = Literal["mcp/prompt/list/resp"]

PROMPT_LIST_RESPONSE_TYPE_VALUES: set[PromptListResponseType] = {
    "mcp/prompt/list/resp",
}


def check_prompt_list_response_type(value: str) -> PromptListResponseType:
    if value in PROMPT_LIST_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROMPT_LIST_RESPONSE_TYPE_VALUES!r}"
    )
