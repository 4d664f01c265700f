from typing import Literal

TaskCreateResponseType = Literal["task/create/resp"]

TASK_CREATE_RESPONSE_TYPE_VALUES: set[TaskCreateResponseType] = {
    "task/create/resp",
}


def check_task_create_response_type(value: str) -> TaskCreateResponseType:
    if value in TASK_CREATE_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TASK_CREATE_RESPONSE_TYPE_VALUES!r}"
    )
