from typing import Literal

A2ATaskCancelResponseType = Literal["a2a/task/cancel/resp"]

A2A_TASK_CANCEL_RESPONSE_TYPE_VALUES: set[A2ATaskCancelResponseType] = {
    "a2a/task/cancel/resp",
}


def check_a2a_task_cancel_response_type(value: str) -> A2ATaskCancelResponseType:
    if value in A2A_TASK_CANCEL_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_TASK_CANCEL_RESPONSE_TYPE_VALUES!r}"
    )
