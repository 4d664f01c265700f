from typing import Literal

TaskGetResponseType = Literal["task/get/resp"]

TASK_GET_RESPONSE_TYPE_VALUES: set[TaskGetResponseType] = {
    "task/get/resp",
}


def check_task_get_response_type(value: str) -> TaskGetResponseType:
    if value in TASK_GET_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TASK_GET_RESPONSE_TYPE_VALUES!r}"
    )
