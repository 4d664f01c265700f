from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.role import Role, check_role
from ..models.sampling_response_type import (
    SamplingResponseType,
    check_sampling_response_type,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sampling_response_content import SamplingResponseContent


T = TypeVar("T", bound="SamplingResponse")


@_attrs_define
class SamplingResponse:
    """mcp/sample/resp: the agent's completion (or refusal, in `error`).

    Attributes:
        type_ (SamplingResponseType | Unset): The A2E message type. Default: 'mcp/sample/resp'.
        id (str | Unset): Message id; a UUID when absent.
        version (str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (str | Unset): Echoes the request's `id`. Default: ''.
        server_id (str | Unset):  Default: ''.
        mcp_request_id (str | Unset):  Default: ''.
        role (Role | Unset): Who speaks a message, as MCP says (`role`).
        content (SamplingResponseContent | Unset): One MCP content block, e.g. `{"type": "text", "text": "..."}`.
        model (str | Unset):  Default: ''.
        stop_reason (str | Unset): `endTurn`, `stopSequence` or `maxTokens`. Default: ''.
        error (str | Unset): Set when the agent refuses. Default: ''.
    """

    type_: SamplingResponseType | Unset = "mcp/sample/resp"
    id: str | Unset = UNSET
    version: str | Unset = "1.0"
    ts: float | Unset = UNSET
    req_id: str | Unset = ""
    server_id: str | Unset = ""
    mcp_request_id: str | Unset = ""
    role: Role | Unset = UNSET
    content: SamplingResponseContent | Unset = UNSET
    model: str | Unset = ""
    stop_reason: str | Unset = ""
    error: str | Unset = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_

        id = self.id

        version = self.version

        ts = self.ts

        req_id = self.req_id

        server_id = self.server_id

        mcp_request_id = self.mcp_request_id

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role

        content: dict[str, Any] | Unset = UNSET
        if not isinstance(self.content, Unset):
            content = self.content.to_dict()

        model = self.model

        stop_reason = self.stop_reason

        error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if type_ is not UNSET:
            field_dict["type"] = type_
        if id is not UNSET:
            field_dict["id"] = id
        if version is not UNSET:
            field_dict["version"] = version
        if ts is not UNSET:
            field_dict["ts"] = ts
        if req_id is not UNSET:
            field_dict["req_id"] = req_id
        if server_id is not UNSET:
            field_dict["server_id"] = server_id
        if mcp_request_id is not UNSET:
            field_dict["mcp_request_id"] = mcp_request_id
        if role is not UNSET:
            field_dict["role"] = role
        if content is not UNSET:
            field_dict["content"] = content
        if model is not UNSET:
            field_dict["model"] = model
        if stop_reason is not UNSET:
            field_dict["stop_reason"] = stop_reason
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.sampling_response_content import SamplingResponseContent

        d = dict(src_dict)
        _type_ = d.pop("type", UNSET)
        type_: SamplingResponseType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = check_sampling_response_type(_type_)

        id = d.pop("id", UNSET)

        version = d.pop("version", UNSET)

        ts = d.pop("ts", UNSET)

        req_id = d.pop("req_id", UNSET)

        server_id = d.pop("server_id", UNSET)

        mcp_request_id = d.pop("mcp_request_id", UNSET)

        _role = d.pop("role", UNSET)
        role: Role | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = check_role(_role)

        _content = d.pop("content", UNSET)
        content: SamplingResponseContent | Unset
        if isinstance(_content, Unset):
            content = UNSET
        else:
            content = SamplingResponseContent.from_dict(_content)

        model = d.pop("model", UNSET)

        stop_reason = d.pop("stop_reason", UNSET)

        error = d.pop("error", UNSET)

        sampling_response = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            server_id=server_id,
            mcp_request_id=mcp_request_id,
            role=role,
            content=content,
            model=model,
            stop_reason=stop_reason,
            error=error,
        )

        sampling_response.additional_properties = d
        return sampling_response

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
