from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.a2a_task_cancel_response_type import (
    A2ATaskCancelResponseType,
    check_a2a_task_cancel_response_type,
)

if TYPE_CHECKING:
    from ..models.a2a_task_cancel_response_task import A2ATaskCancelResponseTask


T = TypeVar("T", bound="A2ATaskCancelResponse")


@_attrs_define
class A2ATaskCancelResponse:
    """a2a/task/cancel/resp: the task as the agent has it once cancelled.

    Attributes:
        type_ (A2ATaskCancelResponseType): The A2E message type. Default: 'a2a/task/cancel/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        ok (bool):  Default: False.
        agent_id (str):  Default: ''.
        task_id (str):  Default: ''.
        task (A2ATaskCancelResponseTask): The A2A task, as the agent answers it (camelCase, as A2A defines it).
    """

    id: str
    ts: float
    task: A2ATaskCancelResponseTask
    type_: A2ATaskCancelResponseType = "a2a/task/cancel/resp"
    version: str = "1.0"
    req_id: str = ""
    ok: bool = False
    agent_id: str = ""
    task_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        ok = self.ok

        agent_id = self.agent_id

        task_id = self.task_id

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
                "ok": ok,
                "agent_id": agent_id,
                "task_id": task_id,
                "task": task,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.a2a_task_cancel_response_task import A2ATaskCancelResponseTask

        d = dict(src_dict)
        type_ = check_a2a_task_cancel_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        ok = d.pop("ok")

        agent_id = d.pop("agent_id")

        task_id = d.pop("task_id")

        task = A2ATaskCancelResponseTask.from_dict(d.pop("task"))

        a2a_task_cancel_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            ok=ok,
            agent_id=agent_id,
            task_id=task_id,
            task=task,
        )

        a2a_task_cancel_response.additional_properties = d
        return a2a_task_cancel_response

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
