from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.approval_arguments import ApprovalArguments


T = TypeVar("T", bound="Approval")


@_attrs_define
class Approval:
    """A call held for approval, as an approver sees it (`GET /v1/approvals`, and the
    `bridge/approval_required` push).

        Attributes:
            task_id (str): The caller's task holding the call. Default: ''.
            caller (str): The calling agent (`sub`). Default: ''.
            tool (str): The tool as the caller named it. Default: ''.
            toolset (str): The toolset it was called through (empty: the catalogue). Default: ''.
            arguments (ApprovalArguments): The arguments held, exactly as they will be sent.
            args_sha256 (str): Hex SHA-256 of the arguments' canonical JSON (keys sorted, no spaces): a decision names
                it, so that it decides on exactly these arguments. Default: ''.
            policy (str): The policy that holds the call. Default: ''.
            policy_version (str): Hex SHA-256 (first 16 digits) of that policy's JSON when the call was held. Default: ''.
            created_at (float): Seconds since the Unix epoch. Default: 0.0.
            expires_at (float): After this, the call ends `failed` (`forbidden`) and no decision is taken. Default: 0.0.
    """

    arguments: ApprovalArguments
    task_id: str = ""
    caller: str = ""
    tool: str = ""
    toolset: str = ""
    args_sha256: str = ""
    policy: str = ""
    policy_version: str = ""
    created_at: float = 0.0
    expires_at: float = 0.0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        task_id = self.task_id

        caller = self.caller

        tool = self.tool

        toolset = self.toolset

        arguments = self.arguments.to_dict()

        args_sha256 = self.args_sha256

        policy = self.policy

        policy_version = self.policy_version

        created_at = self.created_at

        expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "task_id": task_id,
                "caller": caller,
                "tool": tool,
                "toolset": toolset,
                "arguments": arguments,
                "args_sha256": args_sha256,
                "policy": policy,
                "policy_version": policy_version,
                "created_at": created_at,
                "expires_at": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_arguments import ApprovalArguments

        d = dict(src_dict)
        task_id = d.pop("task_id")

        caller = d.pop("caller")

        tool = d.pop("tool")

        toolset = d.pop("toolset")

        arguments = ApprovalArguments.from_dict(d.pop("arguments"))

        args_sha256 = d.pop("args_sha256")

        policy = d.pop("policy")

        policy_version = d.pop("policy_version")

        created_at = d.pop("created_at")

        expires_at = d.pop("expires_at")

        approval = cls(
            task_id=task_id,
            caller=caller,
            tool=tool,
            toolset=toolset,
            arguments=arguments,
            args_sha256=args_sha256,
            policy=policy,
            policy_version=policy_version,
            created_at=created_at,
            expires_at=expires_at,
        )

        approval.additional_properties = d
        return approval

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
