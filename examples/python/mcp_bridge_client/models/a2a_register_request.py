from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.a2a_register_request_type_type_1 import (
    A2ARegisterRequestTypeType1,
    check_a2a_register_request_type_type_1,
)
from ..models.a2a_register_request_type_type_2_type_1 import (
    A2ARegisterRequestTypeType2Type1,
    check_a2a_register_request_type_type_2_type_1,
)
from ..models.a2a_register_request_type_type_3_type_1 import (
    A2ARegisterRequestTypeType3Type1,
    check_a2a_register_request_type_type_3_type_1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.a2a_register_request_headers import A2ARegisterRequestHeaders


T = TypeVar("T", bound="A2ARegisterRequest")


@_attrs_define
class A2ARegisterRequest:
    """a2a/agent/register/req: fetch an A2A agent's card and keep the agent.

    Attributes:
        url (None | str): The agent's base URL; its card is at `/.well-known/agent-card.json`.
        type_ (A2ARegisterRequestTypeType1 | A2ARegisterRequestTypeType2Type1 | A2ARegisterRequestTypeType3Type1 | None
            | Unset): The A2E message type. Default: 'a2a/agent/register/req'.
        id (None | str | Unset): Message id; a UUID when absent.
        version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        agent_id (None | str | Unset): 8 hex characters when empty. Default: ''.
        headers (A2ARegisterRequestHeaders | Unset): Headers sent to the agent (values are secret: shown as `***`).
    """

    url: None | str
    type_: (
        A2ARegisterRequestTypeType1
        | A2ARegisterRequestTypeType2Type1
        | A2ARegisterRequestTypeType3Type1
        | None
        | Unset
    ) = "a2a/agent/register/req"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    agent_id: None | str | Unset = ""
    headers: A2ARegisterRequestHeaders | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        url: None | str
        url = self.url

        type_: None | str | Unset
        if isinstance(self.type_, Unset):
            type_ = UNSET
        elif (
            isinstance(self.type_, str)
            or isinstance(self.type_, str)
            or isinstance(self.type_, str)
        ):
            type_ = self.type_
        else:
            type_ = self.type_

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        ts: float | None | Unset
        if isinstance(self.ts, Unset):
            ts = UNSET
        else:
            ts = self.ts

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        else:
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

        def _parse_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        url = _parse_url(d.pop("url"))

        def _parse_type_(
            data: object,
        ) -> (
            A2ARegisterRequestTypeType1
            | A2ARegisterRequestTypeType2Type1
            | A2ARegisterRequestTypeType3Type1
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_1 = check_a2a_register_request_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_a2a_register_request_type_type_2_type_1(data)

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_a2a_register_request_type_type_3_type_1(data)

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                A2ARegisterRequestTypeType1
                | A2ARegisterRequestTypeType2Type1
                | A2ARegisterRequestTypeType3Type1
                | None
                | Unset,
                data,
            )

        type_ = _parse_type_(d.pop("type", UNSET))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        def _parse_ts(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        ts = _parse_ts(d.pop("ts", UNSET))

        def _parse_agent_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent_id = _parse_agent_id(d.pop("agent_id", UNSET))

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
