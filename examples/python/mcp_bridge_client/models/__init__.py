"""Contains all the data models used in inputs/outputs"""

from .a2a_agent_info import A2AAgentInfo
from .a2a_agent_info_card import A2AAgentInfoCard
from .a2a_agent_info_headers import A2AAgentInfoHeaders
from .a2a_binding import A2ABinding
from .a2a_get_response import A2AGetResponse
from .a2a_get_response_type import A2AGetResponseType
from .a2a_list_response import A2AListResponse
from .a2a_list_response_type import A2AListResponseType
from .a2a_protocol import A2AProtocol
from .a2a_refresh_response import A2ARefreshResponse
from .a2a_refresh_response_type import A2ARefreshResponseType
from .a2a_register_request import A2ARegisterRequest
from .a2a_register_request_headers import A2ARegisterRequestHeaders
from .a2a_register_request_type_type_1 import A2ARegisterRequestTypeType1
from .a2a_register_request_type_type_2_type_1 import A2ARegisterRequestTypeType2Type1
from .a2a_register_request_type_type_3_type_1 import A2ARegisterRequestTypeType3Type1
from .a2a_register_response import A2ARegisterResponse
from .a2a_register_response_type import A2ARegisterResponseType
from .a2a_task_cancel_response import A2ATaskCancelResponse
from .a2a_task_cancel_response_task import A2ATaskCancelResponseTask
from .a2a_task_cancel_response_type import A2ATaskCancelResponseType
from .a2a_unregister_response import A2AUnregisterResponse
from .a2a_unregister_response_type import A2AUnregisterResponseType
from .a2e_message_response_200 import A2EMessageResponse200
from .a2e_message_response_201 import A2EMessageResponse201
from .access_rules import AccessRules
from .approval import Approval
from .approval_arguments import ApprovalArguments
from .approval_decided import ApprovalDecided
from .approval_decision import ApprovalDecision
from .approval_list import ApprovalList
from .approve_rule import ApproveRule
from .approvers import Approvers
from .audit_entry import AuditEntry
from .audit_list_response import AuditListResponse
from .authorize_response import AuthorizeResponse
from .client_metadata_response_200 import ClientMetadataResponse200
from .completion_argument import CompletionArgument
from .completion_context import CompletionContext
from .completion_context_arguments import CompletionContextArguments
from .completion_request import CompletionRequest
from .completion_request_ref import CompletionRequestRef
from .completion_request_type_type_1 import CompletionRequestTypeType1
from .completion_request_type_type_2_type_1 import CompletionRequestTypeType2Type1
from .completion_request_type_type_3_type_1 import CompletionRequestTypeType3Type1
from .completion_response import CompletionResponse
from .completion_response_type import CompletionResponseType
from .content_kind import ContentKind
from .decision import Decision
from .defined_in import DefinedIn
from .elicit_ack import ElicitAck
from .elicit_ack_type import ElicitAckType
from .elicit_action import ElicitAction
from .elicit_request import ElicitRequest
from .elicit_request_requested_schema_type_0 import ElicitRequestRequestedSchemaType0
from .elicit_request_type import ElicitRequestType
from .elicit_response import ElicitResponse
from .elicit_response_content_type_0 import ElicitResponseContentType0
from .elicit_response_type_type_1 import ElicitResponseTypeType1
from .elicit_response_type_type_2_type_1 import ElicitResponseTypeType2Type1
from .elicit_response_type_type_3_type_1 import ElicitResponseTypeType3Type1
from .envelope import Envelope
from .error_body import ErrorBody
from .error_code import ErrorCode
from .health import Health
from .identity_provider import IdentityProvider
from .import_action import ImportAction
from .import_result import ImportResult
from .mcp_prompt import McpPrompt
from .mcp_prompt_argument import McpPromptArgument
from .mcp_prompt_message import McpPromptMessage
from .mcp_prompt_message_content import McpPromptMessageContent
from .mcp_protocol import McpProtocol
from .mcp_resource import McpResource
from .mcp_resource_annotations import McpResourceAnnotations
from .mcp_resource_content import McpResourceContent
from .mcp_resource_content_meta_type_0 import McpResourceContentMetaType0
from .mcp_resource_meta_type_0 import McpResourceMetaType0
from .mcp_resource_template import McpResourceTemplate
from .mcp_resource_template_annotations import McpResourceTemplateAnnotations
from .mcp_resource_template_meta_type_0 import McpResourceTemplateMetaType0
from .mcp_root import McpRoot
from .mcp_server_config import McpServerConfig
from .mcp_server_config_env import McpServerConfigEnv
from .mcp_server_config_headers import McpServerConfigHeaders
from .mcp_server_info import McpServerInfo
from .mcp_server_status import McpServerStatus
from .mcp_transport import McpTransport
from .named_policy import NamedPolicy
from .named_toolset import NamedToolset
from .o_auth_config import OAuthConfig
from .o_auth_grant import OAuthGrant
from .o_auth_kind import OAuthKind
from .policy import Policy
from .policy_list import PolicyList
from .policy_match import PolicyMatch
from .policy_match_claims import PolicyMatchClaims
from .prompt_get_request import PromptGetRequest
from .prompt_get_request_arguments import PromptGetRequestArguments
from .prompt_get_request_type_type_1 import PromptGetRequestTypeType1
from .prompt_get_request_type_type_2_type_1 import PromptGetRequestTypeType2Type1
from .prompt_get_request_type_type_3_type_1 import PromptGetRequestTypeType3Type1
from .prompt_get_response import PromptGetResponse
from .prompt_get_response_type import PromptGetResponseType
from .prompt_list_response import PromptListResponse
from .prompt_list_response_type import PromptListResponseType
from .resource_list_response import ResourceListResponse
from .resource_list_response_type import ResourceListResponseType
from .resource_read_request import ResourceReadRequest
from .resource_read_request_type_type_1 import ResourceReadRequestTypeType1
from .resource_read_request_type_type_2_type_1 import ResourceReadRequestTypeType2Type1
from .resource_read_request_type_type_3_type_1 import ResourceReadRequestTypeType3Type1
from .resource_read_response import ResourceReadResponse
from .resource_read_response_type import ResourceReadResponseType
from .resource_subscribe_request import ResourceSubscribeRequest
from .resource_subscribe_request_type_type_1 import ResourceSubscribeRequestTypeType1
from .resource_subscribe_request_type_type_2_type_1 import (
    ResourceSubscribeRequestTypeType2Type1,
)
from .resource_subscribe_request_type_type_3_type_1 import (
    ResourceSubscribeRequestTypeType3Type1,
)
from .resource_subscribe_response import ResourceSubscribeResponse
from .resource_subscribe_response_type import ResourceSubscribeResponseType
from .resource_templates_response import ResourceTemplatesResponse
from .resource_templates_response_type import ResourceTemplatesResponseType
from .resource_unsubscribe_request import ResourceUnsubscribeRequest
from .resource_unsubscribe_request_type_type_1 import (
    ResourceUnsubscribeRequestTypeType1,
)
from .resource_unsubscribe_request_type_type_2_type_1 import (
    ResourceUnsubscribeRequestTypeType2Type1,
)
from .resource_unsubscribe_request_type_type_3_type_1 import (
    ResourceUnsubscribeRequestTypeType3Type1,
)
from .resource_unsubscribe_response import ResourceUnsubscribeResponse
from .resource_unsubscribe_response_type import ResourceUnsubscribeResponseType
from .role import Role
from .roots_ack import RootsAck
from .roots_ack_type import RootsAckType
from .roots_get_response import RootsGetResponse
from .roots_get_response_type import RootsGetResponseType
from .roots_list_request import RootsListRequest
from .roots_list_request_type import RootsListRequestType
from .roots_list_response import RootsListResponse
from .roots_list_response_type_type_1 import RootsListResponseTypeType1
from .roots_list_response_type_type_2_type_1 import RootsListResponseTypeType2Type1
from .roots_list_response_type_type_3_type_1 import RootsListResponseTypeType3Type1
from .roots_set_request import RootsSetRequest
from .roots_set_request_type_type_1 import RootsSetRequestTypeType1
from .roots_set_request_type_type_2_type_1 import RootsSetRequestTypeType2Type1
from .roots_set_request_type_type_3_type_1 import RootsSetRequestTypeType3Type1
from .roots_set_response import RootsSetResponse
from .roots_set_response_type import RootsSetResponseType
from .sampling_ack import SamplingAck
from .sampling_ack_type import SamplingAckType
from .sampling_request import SamplingRequest
from .sampling_request_messages_item import SamplingRequestMessagesItem
from .sampling_request_metadata import SamplingRequestMetadata
from .sampling_request_model_preferences import SamplingRequestModelPreferences
from .sampling_request_type import SamplingRequestType
from .sampling_response import SamplingResponse
from .sampling_response_content import SamplingResponseContent
from .sampling_response_type_type_1 import SamplingResponseTypeType1
from .sampling_response_type_type_2_type_1 import SamplingResponseTypeType2Type1
from .sampling_response_type_type_3_type_1 import SamplingResponseTypeType3Type1
from .server_get_response import ServerGetResponse
from .server_get_response_type import ServerGetResponseType
from .server_import_request import ServerImportRequest
from .server_import_request_mcp_servers import ServerImportRequestMcpServers
from .server_import_request_servers import ServerImportRequestServers
from .server_import_request_type_type_1 import ServerImportRequestTypeType1
from .server_import_request_type_type_2_type_1 import ServerImportRequestTypeType2Type1
from .server_import_request_type_type_3_type_1 import ServerImportRequestTypeType3Type1
from .server_import_response import ServerImportResponse
from .server_import_response_type import ServerImportResponseType
from .server_list_response import ServerListResponse
from .server_list_response_type import ServerListResponseType
from .server_push import ServerPush
from .server_push_params import ServerPushParams
from .server_push_type import ServerPushType
from .server_reconnect_response import ServerReconnectResponse
from .server_reconnect_response_type import ServerReconnectResponseType
from .server_register_request import ServerRegisterRequest
from .server_register_request_type_type_1 import ServerRegisterRequestTypeType1
from .server_register_request_type_type_2_type_1 import (
    ServerRegisterRequestTypeType2Type1,
)
from .server_register_request_type_type_3_type_1 import (
    ServerRegisterRequestTypeType3Type1,
)
from .server_register_response import ServerRegisterResponse
from .server_register_response_type import ServerRegisterResponseType
from .server_unregister_response import ServerUnregisterResponse
from .server_unregister_response_type import ServerUnregisterResponseType
from .server_update_request import ServerUpdateRequest
from .server_update_request_env_type_0 import ServerUpdateRequestEnvType0
from .server_update_request_headers_type_0 import ServerUpdateRequestHeadersType0
from .server_update_request_type_type_1 import ServerUpdateRequestTypeType1
from .server_update_request_type_type_2_type_1 import ServerUpdateRequestTypeType2Type1
from .server_update_request_type_type_3_type_1 import ServerUpdateRequestTypeType3Type1
from .server_update_response import ServerUpdateResponse
from .server_update_response_type import ServerUpdateResponseType
from .skipped_server import SkippedServer
from .task_cancel_response import TaskCancelResponse
from .task_cancel_response_type import TaskCancelResponseType
from .task_create_response import TaskCreateResponse
from .task_create_response_type import TaskCreateResponseType
from .task_get_response import TaskGetResponse
from .task_get_response_type import TaskGetResponseType
from .task_info import TaskInfo
from .task_list_response import TaskListResponse
from .task_list_response_type import TaskListResponseType
from .task_params import TaskParams
from .task_status import TaskStatus
from .token_endpoint_auth import TokenEndpointAuth
from .tool_approve_response import ToolApproveResponse
from .tool_approve_response_type import ToolApproveResponseType
from .tool_call_cancel_response import ToolCallCancelResponse
from .tool_call_cancel_response_type import ToolCallCancelResponseType
from .tool_call_request import ToolCallRequest
from .tool_call_request_arguments import ToolCallRequestArguments
from .tool_call_request_type_type_1 import ToolCallRequestTypeType1
from .tool_call_request_type_type_2_type_1 import ToolCallRequestTypeType2Type1
from .tool_call_request_type_type_3_type_1 import ToolCallRequestTypeType3Type1
from .tool_call_response import ToolCallResponse
from .tool_call_response_content_item import ToolCallResponseContentItem
from .tool_call_response_structured_content_type_0 import (
    ToolCallResponseStructuredContentType0,
)
from .tool_call_response_type import ToolCallResponseType
from .tool_info import ToolInfo
from .tool_info_annotations_type_0 import ToolInfoAnnotationsType0
from .tool_info_input_schema import ToolInfoInputSchema
from .tool_info_meta_type_0 import ToolInfoMetaType0
from .tool_info_output_schema_type_0 import ToolInfoOutputSchemaType0
from .tool_list_response import ToolListResponse
from .tool_list_response_type import ToolListResponseType
from .tool_source import ToolSource
from .toolset import Toolset
from .toolset_descriptions import ToolsetDescriptions
from .toolset_list import ToolsetList
from .toolset_rename import ToolsetRename
from .upstream_identity import UpstreamIdentity
from .upstream_identity_headers import UpstreamIdentityHeaders

__all__ = (
    "A2AAgentInfo",
    "A2AAgentInfoCard",
    "A2AAgentInfoHeaders",
    "A2ABinding",
    "A2AGetResponse",
    "A2AGetResponseType",
    "A2AListResponse",
    "A2AListResponseType",
    "A2AProtocol",
    "A2ARefreshResponse",
    "A2ARefreshResponseType",
    "A2ARegisterRequest",
    "A2ARegisterRequestHeaders",
    "A2ARegisterRequestTypeType1",
    "A2ARegisterRequestTypeType2Type1",
    "A2ARegisterRequestTypeType3Type1",
    "A2ARegisterResponse",
    "A2ARegisterResponseType",
    "A2ATaskCancelResponse",
    "A2ATaskCancelResponseTask",
    "A2ATaskCancelResponseType",
    "A2AUnregisterResponse",
    "A2AUnregisterResponseType",
    "A2EMessageResponse200",
    "A2EMessageResponse201",
    "AccessRules",
    "Approval",
    "ApprovalArguments",
    "ApprovalDecided",
    "ApprovalDecision",
    "ApprovalList",
    "ApproveRule",
    "Approvers",
    "AuditEntry",
    "AuditListResponse",
    "AuthorizeResponse",
    "ClientMetadataResponse200",
    "CompletionArgument",
    "CompletionContext",
    "CompletionContextArguments",
    "CompletionRequest",
    "CompletionRequestRef",
    "CompletionRequestTypeType1",
    "CompletionRequestTypeType2Type1",
    "CompletionRequestTypeType3Type1",
    "CompletionResponse",
    "CompletionResponseType",
    "ContentKind",
    "Decision",
    "DefinedIn",
    "ElicitAck",
    "ElicitAckType",
    "ElicitAction",
    "ElicitRequest",
    "ElicitRequestRequestedSchemaType0",
    "ElicitRequestType",
    "ElicitResponse",
    "ElicitResponseContentType0",
    "ElicitResponseTypeType1",
    "ElicitResponseTypeType2Type1",
    "ElicitResponseTypeType3Type1",
    "Envelope",
    "ErrorBody",
    "ErrorCode",
    "Health",
    "IdentityProvider",
    "ImportAction",
    "ImportResult",
    "McpPrompt",
    "McpPromptArgument",
    "McpPromptMessage",
    "McpPromptMessageContent",
    "McpProtocol",
    "McpResource",
    "McpResourceAnnotations",
    "McpResourceContent",
    "McpResourceContentMetaType0",
    "McpResourceMetaType0",
    "McpResourceTemplate",
    "McpResourceTemplateAnnotations",
    "McpResourceTemplateMetaType0",
    "McpRoot",
    "McpServerConfig",
    "McpServerConfigEnv",
    "McpServerConfigHeaders",
    "McpServerInfo",
    "McpServerStatus",
    "McpTransport",
    "NamedPolicy",
    "NamedToolset",
    "OAuthConfig",
    "OAuthGrant",
    "OAuthKind",
    "Policy",
    "PolicyList",
    "PolicyMatch",
    "PolicyMatchClaims",
    "PromptGetRequest",
    "PromptGetRequestArguments",
    "PromptGetRequestTypeType1",
    "PromptGetRequestTypeType2Type1",
    "PromptGetRequestTypeType3Type1",
    "PromptGetResponse",
    "PromptGetResponseType",
    "PromptListResponse",
    "PromptListResponseType",
    "ResourceListResponse",
    "ResourceListResponseType",
    "ResourceReadRequest",
    "ResourceReadRequestTypeType1",
    "ResourceReadRequestTypeType2Type1",
    "ResourceReadRequestTypeType3Type1",
    "ResourceReadResponse",
    "ResourceReadResponseType",
    "ResourceSubscribeRequest",
    "ResourceSubscribeRequestTypeType1",
    "ResourceSubscribeRequestTypeType2Type1",
    "ResourceSubscribeRequestTypeType3Type1",
    "ResourceSubscribeResponse",
    "ResourceSubscribeResponseType",
    "ResourceTemplatesResponse",
    "ResourceTemplatesResponseType",
    "ResourceUnsubscribeRequest",
    "ResourceUnsubscribeRequestTypeType1",
    "ResourceUnsubscribeRequestTypeType2Type1",
    "ResourceUnsubscribeRequestTypeType3Type1",
    "ResourceUnsubscribeResponse",
    "ResourceUnsubscribeResponseType",
    "Role",
    "RootsAck",
    "RootsAckType",
    "RootsGetResponse",
    "RootsGetResponseType",
    "RootsListRequest",
    "RootsListRequestType",
    "RootsListResponse",
    "RootsListResponseTypeType1",
    "RootsListResponseTypeType2Type1",
    "RootsListResponseTypeType3Type1",
    "RootsSetRequest",
    "RootsSetRequestTypeType1",
    "RootsSetRequestTypeType2Type1",
    "RootsSetRequestTypeType3Type1",
    "RootsSetResponse",
    "RootsSetResponseType",
    "SamplingAck",
    "SamplingAckType",
    "SamplingRequest",
    "SamplingRequestMessagesItem",
    "SamplingRequestMetadata",
    "SamplingRequestModelPreferences",
    "SamplingRequestType",
    "SamplingResponse",
    "SamplingResponseContent",
    "SamplingResponseTypeType1",
    "SamplingResponseTypeType2Type1",
    "SamplingResponseTypeType3Type1",
    "ServerGetResponse",
    "ServerGetResponseType",
    "ServerImportRequest",
    "ServerImportRequestMcpServers",
    "ServerImportRequestServers",
    "ServerImportRequestTypeType1",
    "ServerImportRequestTypeType2Type1",
    "ServerImportRequestTypeType3Type1",
    "ServerImportResponse",
    "ServerImportResponseType",
    "ServerListResponse",
    "ServerListResponseType",
    "ServerPush",
    "ServerPushParams",
    "ServerPushType",
    "ServerReconnectResponse",
    "ServerReconnectResponseType",
    "ServerRegisterRequest",
    "ServerRegisterRequestTypeType1",
    "ServerRegisterRequestTypeType2Type1",
    "ServerRegisterRequestTypeType3Type1",
    "ServerRegisterResponse",
    "ServerRegisterResponseType",
    "ServerUnregisterResponse",
    "ServerUnregisterResponseType",
    "ServerUpdateRequest",
    "ServerUpdateRequestEnvType0",
    "ServerUpdateRequestHeadersType0",
    "ServerUpdateRequestTypeType1",
    "ServerUpdateRequestTypeType2Type1",
    "ServerUpdateRequestTypeType3Type1",
    "ServerUpdateResponse",
    "ServerUpdateResponseType",
    "SkippedServer",
    "TaskCancelResponse",
    "TaskCancelResponseType",
    "TaskCreateResponse",
    "TaskCreateResponseType",
    "TaskGetResponse",
    "TaskGetResponseType",
    "TaskInfo",
    "TaskListResponse",
    "TaskListResponseType",
    "TaskParams",
    "TaskStatus",
    "TokenEndpointAuth",
    "ToolApproveResponse",
    "ToolApproveResponseType",
    "ToolCallCancelResponse",
    "ToolCallCancelResponseType",
    "ToolCallRequest",
    "ToolCallRequestArguments",
    "ToolCallRequestTypeType1",
    "ToolCallRequestTypeType2Type1",
    "ToolCallRequestTypeType3Type1",
    "ToolCallResponse",
    "ToolCallResponseContentItem",
    "ToolCallResponseStructuredContentType0",
    "ToolCallResponseType",
    "ToolInfo",
    "ToolInfoAnnotationsType0",
    "ToolInfoInputSchema",
    "ToolInfoMetaType0",
    "ToolInfoOutputSchemaType0",
    "ToolListResponse",
    "ToolListResponseType",
    "ToolSource",
    "Toolset",
    "ToolsetDescriptions",
    "ToolsetList",
    "ToolsetRename",
    "UpstreamIdentity",
    "UpstreamIdentityHeaders",
)
