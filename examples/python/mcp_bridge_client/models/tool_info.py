from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.tool_source import ToolSource, check_tool_source
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.tool_info_annotations_type_0 import ToolInfoAnnotationsType0
    from ..models.tool_info_input_schema import ToolInfoInputSchema
    from ..models.tool_info_meta_type_0 import ToolInfoMetaType0
    from ..models.tool_info_output_schema_type_0 import ToolInfoOutputSchemaType0


T = TypeVar("T", bound="ToolInfo")


@_attrs_define
class ToolInfo:
    """One entry of the tool catalogue.

    Attributes:
        name (str): Namespaced name, `{server_id}__{tool}`; past `MCP_BRIDGE_MAX_TOOL_NAME` characters its
            short alias (the start of that name, `_` and hex digits of its SHA-256). Default: ''.
        server_id (str):  Default: ''.
        source (ToolSource): Where a catalogue tool comes from (`source`).
        description (str):  Default: ''.
        input_schema (ToolInfoInputSchema): JSON Schema of the arguments, as MCP defines it.
        title (None | str | Unset):
        output_schema (None | ToolInfoOutputSchemaType0 | Unset): JSON Schema of the structured result, when the tool
            declares one.
        annotations (None | ToolInfoAnnotationsType0 | Unset): MCP tool annotations.
        field_meta (None | ToolInfoMetaType0 | Unset): MCP `_meta`, as the server sent it; a `ui://` URI in
            `ui.resourceUri` (and the deprecated
            `ui/resourceUri`) in the form the bridge lists it, `ui://{server_id}/{rest}`.
    """

    source: ToolSource
    input_schema: ToolInfoInputSchema
    name: str = ""
    server_id: str = ""
    description: str = ""
    title: None | str | Unset = UNSET
    output_schema: None | ToolInfoOutputSchemaType0 | Unset = UNSET
    annotations: None | ToolInfoAnnotationsType0 | Unset = UNSET
    field_meta: None | ToolInfoMetaType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_info_annotations_type_0 import ToolInfoAnnotationsType0
        from ..models.tool_info_meta_type_0 import ToolInfoMetaType0
        from ..models.tool_info_output_schema_type_0 import ToolInfoOutputSchemaType0

        name = self.name

        server_id = self.server_id

        source: str = self.source

        description = self.description

        input_schema = self.input_schema.to_dict()

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        output_schema: dict[str, Any] | None | Unset
        if isinstance(self.output_schema, Unset):
            output_schema = UNSET
        elif isinstance(self.output_schema, ToolInfoOutputSchemaType0):
            output_schema = self.output_schema.to_dict()
        else:
            output_schema = self.output_schema

        annotations: dict[str, Any] | None | Unset
        if isinstance(self.annotations, Unset):
            annotations = UNSET
        elif isinstance(self.annotations, ToolInfoAnnotationsType0):
            annotations = self.annotations.to_dict()
        else:
            annotations = self.annotations

        field_meta: dict[str, Any] | None | Unset
        if isinstance(self.field_meta, Unset):
            field_meta = UNSET
        elif isinstance(self.field_meta, ToolInfoMetaType0):
            field_meta = self.field_meta.to_dict()
        else:
            field_meta = self.field_meta

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "server_id": server_id,
                "source": source,
                "description": description,
                "input_schema": input_schema,
            }
        )
        if title is not UNSET:
            field_dict["title"] = title
        if output_schema is not UNSET:
            field_dict["output_schema"] = output_schema
        if annotations is not UNSET:
            field_dict["annotations"] = annotations
        if field_meta is not UNSET:
            field_dict["_meta"] = field_meta

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.tool_info_annotations_type_0 import ToolInfoAnnotationsType0
        from ..models.tool_info_input_schema import ToolInfoInputSchema
        from ..models.tool_info_meta_type_0 import ToolInfoMetaType0
        from ..models.tool_info_output_schema_type_0 import ToolInfoOutputSchemaType0

        d = dict(src_dict)
        name = d.pop("name")

        server_id = d.pop("server_id")

        source = check_tool_source(d.pop("source"))

        description = d.pop("description")

        input_schema = ToolInfoInputSchema.from_dict(d.pop("input_schema"))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        def _parse_output_schema(
            data: object,
        ) -> None | ToolInfoOutputSchemaType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                output_schema_type_0 = ToolInfoOutputSchemaType0.from_dict(data)

                return output_schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolInfoOutputSchemaType0 | Unset, data)

        output_schema = _parse_output_schema(d.pop("output_schema", UNSET))

        def _parse_annotations(data: object) -> None | ToolInfoAnnotationsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                annotations_type_0 = ToolInfoAnnotationsType0.from_dict(data)

                return annotations_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolInfoAnnotationsType0 | Unset, data)

        annotations = _parse_annotations(d.pop("annotations", UNSET))

        def _parse_field_meta(data: object) -> None | ToolInfoMetaType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                field_meta_type_0 = ToolInfoMetaType0.from_dict(data)

                return field_meta_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolInfoMetaType0 | Unset, data)

        field_meta = _parse_field_meta(d.pop("_meta", UNSET))

        tool_info = cls(
            name=name,
            server_id=server_id,
            source=source,
            description=description,
            input_schema=input_schema,
            title=title,
            output_schema=output_schema,
            annotations=annotations,
            field_meta=field_meta,
        )

        tool_info.additional_properties = d
        return tool_info

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
