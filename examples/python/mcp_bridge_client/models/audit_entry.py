from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AuditEntry")


@_attrs_define
class AuditEntry:
    """One change, as `GET /v1/audit` lists it.

    Attributes:
        id (int): Increasing; `before` of the next page.
        at (float): When, in seconds since the epoch.
        actor (str): The agent (token `sub`) that made the change.
        action (str): `server.register`, `server.update`, `server.unregister`, `agent.register`,
            `agent.refresh` or `agent.unregister`; a refusal (`tool.call.denied`, …); a hook's
            decision (`hook.deny`, `hook.modify`, `hook.failed`, `hook.allow`).
        target (str): The server or agent id.
        detail (str): What changed (field names, a transport, a command or a redacted URL).
    """

    id: int
    at: float
    actor: str
    action: str
    target: str
    detail: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        at = self.at

        actor = self.actor

        action = self.action

        target = self.target

        detail = self.detail

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "at": at,
                "actor": actor,
                "action": action,
                "target": target,
                "detail": detail,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        at = d.pop("at")

        actor = d.pop("actor")

        action = d.pop("action")

        target = d.pop("target")

        detail = d.pop("detail")

        audit_entry = cls(
            id=id,
            at=at,
            actor=actor,
            action=action,
            target=target,
            detail=detail,
        )

        audit_entry.additional_properties = d
        return audit_entry

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
