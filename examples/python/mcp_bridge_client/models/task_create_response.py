from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.task_create_response_type import (
    TaskCreateResponseType,
    check_task_create_response_type,
)
from ..models.task_status import TaskStatus, check_task_status

if TYPE_CHECKING:
    from ..models.task_info import TaskInfo


T = TypeVar("T", bound="TaskCreateResponse")


@_attrs_define
class TaskCreateResponse:
    """The answer (202) to a `tool/call/req` with `task`: the task that now runs the call.

    Attributes:
        type_ (TaskCreateResponseType): The A2E message type. Default: 'task/create/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        task_id (str):  Default: ''.
        status (TaskStatus): A task's status, as MCP names it. `completed`, `failed` and `cancelled` are final.
        task (TaskInfo): A task: where its call runs and how far it is.
    """

    id: str
    ts: float
    status: TaskStatus
    task: TaskInfo
    type_: TaskCreateResponseType = "task/create/resp"
    version: str = "1.0"
    req_id: str = ""
    task_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        task_id = self.task_id

        status: str = self.status

        task = self.task.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "task_id": task_id,
                "status": status,
                "task": task,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.task_info import TaskInfo

        d = dict(src_dict)
        type_ = check_task_create_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        task_id = d.pop("task_id")

        status = check_task_status(d.pop("status"))

        task = TaskInfo.from_dict(d.pop("task"))

        task_create_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            task_id=task_id,
            status=status,
            task=task,
        )

        task_create_response.additional_properties = d
        return task_create_response

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
