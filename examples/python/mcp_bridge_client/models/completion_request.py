from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.completion_request_type_type_1 import (
    CompletionRequestTypeType1,
    check_completion_request_type_type_1,
)
from ..models.completion_request_type_type_2_type_1 import (
    CompletionRequestTypeType2Type1,
    check_completion_request_type_type_2_type_1,
)
from ..models.completion_request_type_type_3_type_1 import (
    CompletionRequestTypeType3Type1,
    check_completion_request_type_type_3_type_1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.completion_argument import CompletionArgument
    from ..models.completion_context import CompletionContext
    from ..models.completion_request_ref import CompletionRequestRef


T = TypeVar("T", bound="CompletionRequest")


@_attrs_define
class CompletionRequest:
    """mcp/completion/req: suggestions for a prompt or resource-template argument.

    Attributes:
        type_ (CompletionRequestTypeType1 | CompletionRequestTypeType2Type1 | CompletionRequestTypeType3Type1 | None |
            Unset): The A2E message type. Default: 'mcp/completion/req'.
        id (None | str | Unset): Message id; a UUID when absent.
        version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
        ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
        server_id (None | str | Unset): Routed by the reference when empty. Default: ''.
        ref (CompletionRequestRef | Unset): An MCP reference, exactly as MCP defines it: `{"type": "ref/prompt", "name":
            …}` or
            `{"type": "ref/resource", "uri": <the template>}`.
        argument (CompletionArgument | Unset): The argument being completed.
        context (CompletionContext | None | Unset):
    """

    type_: (
        CompletionRequestTypeType1
        | CompletionRequestTypeType2Type1
        | CompletionRequestTypeType3Type1
        | None
        | Unset
    ) = "mcp/completion/req"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    server_id: None | str | Unset = ""
    ref: CompletionRequestRef | Unset = UNSET
    argument: CompletionArgument | Unset = UNSET
    context: CompletionContext | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.completion_context import CompletionContext

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

        server_id: None | str | Unset
        if isinstance(self.server_id, Unset):
            server_id = UNSET
        else:
            server_id = self.server_id

        ref: dict[str, Any] | Unset = UNSET
        if not isinstance(self.ref, Unset):
            ref = self.ref.to_dict()

        argument: dict[str, Any] | Unset = UNSET
        if not isinstance(self.argument, Unset):
            argument = self.argument.to_dict()

        context: dict[str, Any] | None | Unset
        if isinstance(self.context, Unset):
            context = UNSET
        elif isinstance(self.context, CompletionContext):
            context = self.context.to_dict()
        else:
            context = self.context

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
        if server_id is not UNSET:
            field_dict["server_id"] = server_id
        if ref is not UNSET:
            field_dict["ref"] = ref
        if argument is not UNSET:
            field_dict["argument"] = argument
        if context is not UNSET:
            field_dict["context"] = context

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.completion_argument import CompletionArgument
        from ..models.completion_context import CompletionContext
        from ..models.completion_request_ref import CompletionRequestRef

        d = dict(src_dict)

        def _parse_type_(
            data: object,
        ) -> (
            CompletionRequestTypeType1
            | CompletionRequestTypeType2Type1
            | CompletionRequestTypeType3Type1
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
                type_type_1 = check_completion_request_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_completion_request_type_type_2_type_1(data)

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_completion_request_type_type_3_type_1(data)

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                CompletionRequestTypeType1
                | CompletionRequestTypeType2Type1
                | CompletionRequestTypeType3Type1
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

        def _parse_server_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        server_id = _parse_server_id(d.pop("server_id", UNSET))

        _ref = d.pop("ref", UNSET)
        ref: CompletionRequestRef | Unset
        if isinstance(_ref, Unset):
            ref = UNSET
        else:
            ref = CompletionRequestRef.from_dict(_ref)

        _argument = d.pop("argument", UNSET)
        argument: CompletionArgument | Unset
        if isinstance(_argument, Unset):
            argument = UNSET
        else:
            argument = CompletionArgument.from_dict(_argument)

        def _parse_context(data: object) -> CompletionContext | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_type_0 = CompletionContext.from_dict(data)

                return context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CompletionContext | None | Unset, data)

        context = _parse_context(d.pop("context", UNSET))

        completion_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            server_id=server_id,
            ref=ref,
            argument=argument,
            context=context,
        )

        completion_request.additional_properties = d
        return completion_request

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
