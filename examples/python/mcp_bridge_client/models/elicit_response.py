from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.elicit_action import ElicitAction, check_elicit_action
from ..models.elicit_response_type_type_1 import (
    ElicitResponseTypeType1,
    check_elicit_response_type_type_1,
)
from ..models.elicit_response_type_type_2_type_1 import (
    ElicitResponseTypeType2Type1,
    check_elicit_response_type_type_2_type_1,
)
from ..models.elicit_response_type_type_3_type_1 import (
    ElicitResponseTypeType3Type1,
    check_elicit_response_type_type_3_type_1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.elicit_response_content_type_0 import ElicitResponseContentType0


T = TypeVar("T", bound="ElicitResponse")


@_attrs_define
class ElicitResponse:
    """mcp/elicit/resp: the agent's answer.

    Attributes:
        action (ElicitAction): What the agent did with an elicitation (`action` of mcp/elicit/resp).
        type_ (ElicitResponseTypeType1 | ElicitResponseTypeType2Type1 | ElicitResponseTypeType3Type1 | None | Unset):
            The A2E message type. Default: 'mcp/elicit/resp'.
        id (None | str | Unset): Message id; a UUID when absent.
        version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        req_id (None | str | Unset): Echoes the request's `id`. Default: ''.
        content (ElicitResponseContentType0 | None | Unset): The form's values (accept, form mode).
    """

    action: ElicitAction
    type_: (
        ElicitResponseTypeType1
        | ElicitResponseTypeType2Type1
        | ElicitResponseTypeType3Type1
        | None
        | Unset
    ) = "mcp/elicit/resp"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    req_id: None | str | Unset = ""
    content: ElicitResponseContentType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.elicit_response_content_type_0 import ElicitResponseContentType0

        action: str = self.action

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

        content: dict[str, Any] | None | Unset
        if isinstance(self.content, Unset):
            content = UNSET
        elif isinstance(self.content, ElicitResponseContentType0):
            content = self.content.to_dict()
        else:
            content = self.content

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
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
        if req_id is not UNSET:
            field_dict["req_id"] = req_id
        if content is not UNSET:
            field_dict["content"] = content

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.elicit_response_content_type_0 import ElicitResponseContentType0

        d = dict(src_dict)
        action = check_elicit_action(d.pop("action"))

        def _parse_type_(
            data: object,
        ) -> (
            ElicitResponseTypeType1
            | ElicitResponseTypeType2Type1
            | ElicitResponseTypeType3Type1
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
                type_type_1 = check_elicit_response_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_elicit_response_type_type_2_type_1(data)

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_elicit_response_type_type_3_type_1(data)

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                ElicitResponseTypeType1
                | ElicitResponseTypeType2Type1
                | ElicitResponseTypeType3Type1
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

        def _parse_req_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        req_id = _parse_req_id(d.pop("req_id", UNSET))

        def _parse_content(data: object) -> ElicitResponseContentType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                content_type_0 = ElicitResponseContentType0.from_dict(data)

                return content_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ElicitResponseContentType0 | None | Unset, data)

        content = _parse_content(d.pop("content", UNSET))

        elicit_response = cls(
            action=action,
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            req_id=req_id,
            content=content,
        )

        elicit_response.additional_properties = d
        return elicit_response

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
