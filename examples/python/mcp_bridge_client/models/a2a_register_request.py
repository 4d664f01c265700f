from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.a2a_register_request_type import (
    A2ARegisterRequestType,
    check_a2a_register_request_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.a2a_register_request_headers import A2ARegisterRequestHeaders


T = TypeVar("T", bound="A2ARegisterRequest")


@_attrs_define
class A2ARegisterRequest:
    """a2a/agent/register/req: fetch an A2A agent's card and keep the agent.

    Attributes:
        url (str): The agent's base URL; its card is at `/.well-known/agent-card.json`.
        type_ (A2ARegisterRequestType | Unset): The A2E message type. Default: 'a2a/agent/register/req'.
        id (str | Unset): Message id; a UUID when absent.
        version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        agent_id (str | Unset): 8 hex characters when empty. Default: ''.
        headers (A2ARegisterRequestHeaders | Unset): Headers sent to the agent (values are secret: shown as `***`).
    """

    url: str
    type_: A2ARegisterRequestType | Unset = "a2a/agent/register/req"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    agent_id: str | Unset = ""
    headers: A2ARegisterRequestHeaders | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        agent_id = self.agent_id

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "url": url,
            }
        )
        if type_ is not UNSET:
            field_dict["type"] = type_
        if id is not UNSET:
            field_dict["id"] = id
        if version is not UNSET:
            field_dict["version"] = version
        if ts is not UNSET:
            field_dict["ts"] = ts
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if headers is not UNSET:
            field_dict["headers"] = headers

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.a2a_register_request_headers import A2ARegisterRequestHeaders

        d = dict(src_dict)
        url = d.pop("url")

        _type_ = d.pop("type", UNSET)
        type_: A2ARegisterRequestType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_a2a_register_request_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        agent_id = d.pop("agent_id", UNSET)

        _headers = d.pop("headers", UNSET)
        headers: A2ARegisterRequestHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = A2ARegisterRequestHeaders.from_dict(_headers)

        a2a_register_request = cls(
            url=url,
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            agent_id=agent_id,
            headers=headers,
        )

        a2a_register_request.additional_properties = d
        return a2a_register_request

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
