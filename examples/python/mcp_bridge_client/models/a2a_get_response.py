from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.a2a_get_response_type import (
    A2AGetResponseType,
    check_a2a_get_response_type,
)

if TYPE_CHECKING:
    from ..models.a2a_agent_info import A2AAgentInfo


T = TypeVar("T", bound="A2AGetResponse")


@_attrs_define
class A2AGetResponse:
    """a2a/agent/get/resp.

    Attributes:
        type_ (A2AGetResponseType): The A2E message type. Default: 'a2a/agent/get/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        agent (A2AAgentInfo): A registered A2A agent (beyond the seed).
    """

    id: str
    ts: float
    agent: A2AAgentInfo
    type_: A2AGetResponseType = "a2a/agent/get/resp"
    version: str = "1.0"
    req_id: str = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        agent = self.agent.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
                "version": version,
                "ts": ts,
                "req_id": req_id,
                "agent": agent,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.a2a_agent_info import A2AAgentInfo

        d = dict(src_dict)
        type_ = check_a2a_get_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        agent = A2AAgentInfo.from_dict(d.pop("agent"))

        a2a_get_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            agent=agent,
        )

        a2a_get_response.additional_properties = d
        return a2a_get_response

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
