from typing import Literal

TaskListResponseType = Literal["task/list/resp"]

TASK_LIST_RESPONSE_TYPE_VALUES: set[TaskListResponseType] = {
    "task/list/resp",
}


def check_task_list_response_type(value: str) -> TaskListResponseType:
    if value in TASK_LIST_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TASK_LIST_RESPONSE_TYPE_VALUES!r}"
    )
