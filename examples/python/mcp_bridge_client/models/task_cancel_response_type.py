from typing import Literal

TaskCancelResponseType = Literal["task/cancel/resp"]

TASK_CANCEL_RESPONSE_TYPE_VALUES: set[TaskCancelResponseType] = {
    "task/cancel/resp",
}


def check_task_cancel_response_type(value: str) -> TaskCancelResponseType:
    if value in TASK_CANCEL_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TASK_CANCEL_RESPONSE_TYPE_VALUES!r}"
    )
