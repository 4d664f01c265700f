from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.task_status import TaskStatus, check_task_status

T = TypeVar("T", bound="TaskInfo")


@_attrs_define
class TaskInfo:
    """A task: where its call runs and how far it is.

    Attributes:
        task_id (str):  Default: ''.
        status (TaskStatus): A task's status, as MCP names it. `completed`, `failed` and `cancelled` are final.
        status_message (str): Why it is in its status (a failure's reason: "interrupted by restart" for a call the
            bridge was running when it stopped). Default: ''.
        name (str): The tool, as the call named it. Default: ''.
        server_id (str): The server running the call (empty until known, and for an agent-bridge tool). Default: ''.
        call_id (str): The A2E `id` of the `tool/call/req` that created the task (the `req_id` of its
            progress and status events). Default: ''.
        upstream (bool): Whether the upstream server runs the call as an MCP task (it would survive a restart
            of the bridge); false while the bridge runs it, as it does every call for now. Default: False.
        ttl (int): Milliseconds the task is kept from its creation. Default: 0.
        poll_interval (int): Milliseconds between polls that make sense (events say the same sooner). Default: 0.
        created_at (float): Seconds since the Unix epoch. Default: 0.0.
        updated_at (float):  Default: 0.0.
        expires_at (float): When the task and its result are deleted. Default: 0.0.
    """

    status: TaskStatus
    task_id: str = ""
    status_message: str = ""
    name: str = ""
    server_id: str = ""
    call_id: str = ""
    upstream: bool = False
    ttl: int = 0
    poll_interval: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    expires_at: float = 0.0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        task_id = self.task_id

        status: str = self.status

        status_message = self.status_message

        name = self.name

        server_id = self.server_id

        call_id = self.call_id

        upstream = self.upstream

        ttl = self.ttl

        poll_interval = self.poll_interval

        created_at = self.created_at

        updated_at = self.updated_at

        expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "task_id": task_id,
                "status": status,
                "status_message": status_message,
                "name": name,
                "server_id": server_id,
                "call_id": call_id,
                "upstream": upstream,
                "ttl": ttl,
                "poll_interval": poll_interval,
                "created_at": created_at,
                "updated_at": updated_at,
                "expires_at": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        task_id = d.pop("task_id")

        status = check_task_status(d.pop("status"))

        status_message = d.pop("status_message")

        name = d.pop("name")

        server_id = d.pop("server_id")

        call_id = d.pop("call_id")

        upstream = d.pop("upstream")

        ttl = d.pop("ttl")

        poll_interval = d.pop("poll_interval")

        created_at = d.pop("created_at")

        updated_at = d.pop("updated_at")

        expires_at = d.pop("expires_at")

        task_info = cls(
            task_id=task_id,
            status=status,
            status_message=status_message,
            name=name,
            server_id=server_id,
            call_id=call_id,
            upstream=upstream,
            ttl=ttl,
            poll_interval=poll_interval,
            created_at=created_at,
            updated_at=updated_at,
            expires_at=expires_at,
        )

        task_info.additional_properties = d
        return task_info

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
