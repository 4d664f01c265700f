from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.role import Role, check_role
from ..models.sampling_response_type_type_1 import (
    SamplingResponseTypeType1,
    check_sampling_response_type_type_1,
)
from ..models.sampling_response_type_type_2_type_1 import (
    SamplingResponseTypeType2Type1,
    check_sampling_response_type_type_2_type_1,
)
from ..models.sampling_response_type_type_3_type_1 import (
    SamplingResponseTypeType3Type1,
    check_sampling_response_type_type_3_type_1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sampling_response_content import SamplingResponseContent


T = TypeVar("T", bound="SamplingResponse")


@_attrs_define
class SamplingResponse:
    """mcp/sample/resp: the agent's completion (or refusal, in `error`).

    Attributes:
        type_ (None | SamplingResponseTypeType1 | SamplingResponseTypeType2Type1 | SamplingResponseTypeType3Type1 |
            Unset): The A2E message type. Default: 'mcp/sample/resp'.
        id (None | str | Unset): Message id; a UUID when absent.
        version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (None | str | Unset): Echoes the request's `id`. Default: ''.
        server_id (None | str | Unset):  Default: ''.
        mcp_request_id (None | str | Unset):  Default: ''.
        role (Role | Unset): Who speaks a message, as MCP says (`role`).
        content (SamplingResponseContent | Unset): One MCP content block, e.g. `{"type": "text", "text": "..."}`.
        model (None | str | Unset):  Default: ''.
        stop_reason (None | str | Unset): `endTurn`, `stopSequence` or `maxTokens`. Default: ''.
        error (None | str | Unset): Set when the agent refuses. Default: ''.
    """

    type_: (
        None
        | SamplingResponseTypeType1
        | SamplingResponseTypeType2Type1
        | SamplingResponseTypeType3Type1
        | Unset
    ) = "mcp/sample/resp"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    req_id: None | str | Unset = ""
    server_id: None | str | Unset = ""
    mcp_request_id: None | str | Unset = ""
    role: Role | Unset = UNSET
    content: SamplingResponseContent | Unset = UNSET
    model: None | str | Unset = ""
    stop_reason: None | str | Unset = ""
    error: None | str | Unset = ""
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
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

        req_id: None | str | Unset
        if isinstance(self.req_id, Unset):
            req_id = UNSET
        else:
            req_id = self.req_id

        server_id: None | str | Unset
        if isinstance(self.server_id, Unset):
            server_id = UNSET
        else:
            server_id = self.server_id

        mcp_request_id: None | str | Unset
        if isinstance(self.mcp_request_id, Unset):
            mcp_request_id = UNSET
        else:
            mcp_request_id = self.mcp_request_id

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role

        content: dict[str, Any] | Unset = UNSET
        if not isinstance(self.content, Unset):
            content = self.content.to_dict()

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        stop_reason: None | str | Unset
        if isinstance(self.stop_reason, Unset):
            stop_reason = UNSET
        else:
            stop_reason = self.stop_reason

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
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

        def _parse_type_(
            data: object,
        ) -> (
            None
            | SamplingResponseTypeType1
            | SamplingResponseTypeType2Type1
            | SamplingResponseTypeType3Type1
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_1 = check_sampling_response_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_sampling_response_type_type_2_type_1(data)

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_sampling_response_type_type_3_type_1(data)

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | SamplingResponseTypeType1
                | SamplingResponseTypeType2Type1
                | SamplingResponseTypeType3Type1
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

        def _parse_req_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        req_id = _parse_req_id(d.pop("req_id", UNSET))

        def _parse_server_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        server_id = _parse_server_id(d.pop("server_id", UNSET))

        def _parse_mcp_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mcp_request_id = _parse_mcp_request_id(d.pop("mcp_request_id", UNSET))

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

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_stop_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        stop_reason = _parse_stop_reason(d.pop("stop_reason", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

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
