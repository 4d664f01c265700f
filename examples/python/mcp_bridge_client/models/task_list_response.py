from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.task_list_response_type import (
    TaskListResponseType,
    check_task_list_response_type,
)

if TYPE_CHECKING:
    from ..models.task_info import TaskInfo


T = TypeVar("T", bound="TaskListResponse")


@_attrs_define
class TaskListResponse:
    """task/list/resp: a page of the caller's tasks that have not expired, oldest first.

    Attributes:
        type_ (TaskListResponseType): The A2E message type. Default: 'task/list/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        tasks (list[TaskInfo]):
        next_cursor (str): The cursor of the next page; empty on the last. Default: ''.
    """

    id: str
    ts: float
    tasks: list[TaskInfo]
    type_: TaskListResponseType = "task/list/resp"
    version: str = "1.0"
    req_id: str = ""
    next_cursor: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        tasks = []
        for tasks_item_data in self.tasks:
            tasks_item = tasks_item_data.to_dict()
            tasks.append(tasks_item)

        next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "tasks": tasks,
                "next_cursor": next_cursor,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.task_info import TaskInfo

        d = dict(src_dict)
        type_ = check_task_list_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        tasks = []
        _tasks = d.pop("tasks")
        for tasks_item_data in _tasks:
            tasks_item = TaskInfo.from_dict(tasks_item_data)

            tasks.append(tasks_item)

        next_cursor = d.pop("next_cursor")

        task_list_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            tasks=tasks,
            next_cursor=next_cursor,
        )

        task_list_response.additional_properties = d
        return task_list_response

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
