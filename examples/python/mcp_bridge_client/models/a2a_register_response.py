from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.a2a_register_response_type import (
    A2ARegisterResponseType,
    check_a2a_register_response_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.a2a_agent_info import A2AAgentInfo


T = TypeVar("T", bound="A2ARegisterResponse")


@_attrs_define
class A2ARegisterResponse:
    """a2a/agent/register/resp.

    Attributes:
        type_ (A2ARegisterResponseType): The A2E message type. Default: 'a2a/agent/register/resp'.
        id (str): Message id; a UUID when absent.
        version (str): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str): Echoes the request's `id`. Default: ''.
        ok (bool):  Default: False.
        agent (A2AAgentInfo | None | Unset):
    """

    id: str
    ts: float
    type_: A2ARegisterResponseType = "a2a/agent/register/resp"
    version: str = "1.0"
    req_id: str = ""
    ok: bool = False
    agent: A2AAgentInfo | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.a2a_agent_info import A2AAgentInfo

        type_: str = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        ok = self.ok

        agent: dict[str, Any] | None | Unset
        if isinstance(self.agent, Unset):
            agent = UNSET
        elif isinstance(self.agent, A2AAgentInfo):
            agent = self.agent.to_dict()
        else:
            agent = self.agent

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
            }
        )
        if agent is not UNSET:
            field_dict["agent"] = agent

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.a2a_agent_info import A2AAgentInfo

        d = dict(src_dict)
        type_ = check_a2a_register_response_type(d.pop("type"))

        id = d.pop("id")

        version = d.pop("version")

        ts = d.pop("ts")

        req_id = d.pop("req_id")

        ok = d.pop("ok")

        def _parse_agent(data: object) -> A2AAgentInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                agent_type_0 = A2AAgentInfo.from_dict(data)

                return agent_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(A2AAgentInfo | None | Unset, data)

        agent = _parse_agent(d.pop("agent", UNSET))

        a2a_register_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            ok=ok,
            agent=agent,
        )

        a2a_register_response.additional_properties = d
        return a2a_register_response

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
