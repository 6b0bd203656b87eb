// Every command the webview may call, written once. Three things are made from this list, so
// they cannot disagree: the invoke handler's registration (`lib.rs`, through
// `with_command_names!`), the app manifest's `allow-…` permissions (the root build.rs includes
// this file), which `capabilities/default.json` grants through the `allow-app-commands` set
// (permissions/app-commands.toml), and the UI's `CommandName` type (the IPC schema, then
// `npm run gen:types`), so a misspelt command fails the UI's type check.
//
// Plain `macro_rules!` and a `const`, no Tauri: the build script compiles this file as well.

/// Calls `$then!` with every command's name, as the function's identifier in `commands`.
macro_rules! with_command_names {
    ($then:ident) => {
        $then! {
            app_info,
            open_session,
            attach,
            prompt,
            cancel,
            respond_permission,
            elicitation_answer,
            background_task_stop,
            checkpoint_list,
            checkpoint_changes,
            checkpoint_file,
            checkpoint_revert,
            checkpoint_restore,
            close_session,
            reconnect_session,
            pick_folder,
            set_mode,
            set_config_option,
            list_files,
            open_path,
            reveal_path,
            open_url,
            open_settings_file,
            history_status,
            history_list,
            history_search,
            history_events,
            history_delete,
            history_export,
            history_copy_id,
            history_continue,
            history_send_context,
            history_agent_sessions,
            history_import,
            restored_sessions,
            set_open_sessions,
            save_draft,
            continue_session,
            agents_list,
            agent_check,
            agent_install,
            agents_use_for_new_sessions,
            agents_open_settings,
            agents_open_manifest,
            agents_import_registry,
            agents_copy_install_command,
            secrets_list,
            secret_set,
            secret_delete,
            mcp_servers_list,
            project_mcp_offer,
            project_mcp_decide,
            project_mcp_restart,
            sign_in_agent,
            sign_in_api_key,
            agent_sign_in,
            sign_in_keep_prompt,
            login_start,
            login_input,
            login_resize,
            login_cancel,
        }
    };
}

macro_rules! command_name_strs {
    ($($name:ident),* $(,)?) => {
        &[$(stringify!($name)),*]
    };
}

/// Every command the webview may call, by name.
pub const COMMAND_NAMES: &[&str] = with_command_names!(command_name_strs);
